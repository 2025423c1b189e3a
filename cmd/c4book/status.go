package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/cmd/c4book/internal/status"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// statusLong is the help of status; the workers' status interval in it is
// worker.DefaultStatusEvery, which c4book worker uses.
var statusLong = `Show the jobs and the workers of a NATS server (--nats URL, nats.url).

Jobs: state, positions solved of those to solve, failed tasks, when the
job started and when its coordinator last reported; then, by job and
worker, the results its coordinator accepted and rejected in its run, and
the cross-checks each worker passed and failed. Every job a
coordinator reported to the server is shown, or only those named with
--job and the job of --depth and --root (with --width and --height) when
either is given.

Workers: id, host, positions solved, tasks done, rate (positions solved
per second since the worker started, as of its last report), whether it
is busy (on a task when it reported, or took one since its report before:
it reports every ` + human.Span(worker.DefaultStatusEvery) + `, and at once when it takes a task after a
report that said it was idle), and when it last reported (a worker silent
for two minutes is gone from the list).

--json prints one JSON object {"jobs": [...], "workers": [...]} with the
fields of the coordinator's and the workers' reports, and "rate".

--watch shows the status again every --interval (default 5s) until
Ctrl-C, which ends it with status 0: on a terminal the screen is cleared
and redrawn, otherwise the reports follow one another with a blank line
between two. Each job then also shows its RATE/S and ETA, from its two
latest reports: the positions done between them over the time between
them. ETA is "--" until there are two reports of the phase, and "-" when
nothing moved between them, when the job is not running, or when its
coordinator has not reported for a minute. A server that does not answer,
or a queue not set up yet, is said in place of the report, and the watch
goes on.

Credentials are those of the other commands: the operator's token
(nats.token) or user and password (nats.user, nats.password), or, on a
cluster whose workers connect with keys, an observer's key (--nkey FILE,
nats.nkey, made by "c4book worker add NAME --observer"), which may read
the status and nothing else. A worker's key may not read it: status says
so at once.`

const statusExample = `  c4book status --nats nats://coordinator:4222
  c4book status --nats nats://coordinator:4222 --depth 12 --json
  c4book status --nats nats://coordinator:4222 --watch --interval 10s
  c4book status --nats nats://coordinator:4222 --nkey ops.nkey --watch`

// newStatusCommand builds "c4book status".
func newStatusCommand(a *app) *cobra.Command {
	var jobs []string
	var asJSON, watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:     "status --nats URL [--nkey FILE] [--job ID]... [--depth D] [--root MOVES] [--json | --watch [--interval D]]",
		Short:   "Show the jobs and workers of a NATS server",
		Long:    statusLong,
		Example: statusExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.NATS.URL == "" {
				return newUsageError(cmd, errors.New("--nats URL (nats.url) is required: the NATS server of the coordinator, such as nats://host:4222"))
			}
			switch {
			case watch && asJSON:
				return newUsageError(cmd, errors.New("--watch and --json do not go together: --watch draws tables for people"))
			case cmd.Flags().Changed("interval") && !watch:
				return newUsageError(cmd, errors.New("--interval goes with --watch"))
			case interval <= 0:
				return newUsageError(cmd, fmt.Errorf("--interval %v: must be more than 0", interval))
			}
			if !watch {
				interval = 0
			}
			if err := status.CheckKey(cfg.NATS); err != nil {
				return err
			}
			if cmd.Flags().Changed("depth") || cmd.Flags().Changed("root") {
				board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
				if err != nil {
					return err
				}
				spec := coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth}
				jobs = append(jobs, spec.ID())
			}
			return runStatus(cmd.Context(), a, cfg, jobs, asJSON, interval)
		},
	}
	f := cmd.Flags()
	keyFlag(f, "nats", "nats.url", "", "`URL` of the NATS server")
	keyFlag(f, "nkey", "nats.nkey", "", "an observer's key `FILE`, made by c4book worker add NAME --observer")
	f.StringArrayVar(&jobs, "job", nil, "show the job `ID` (\"7x6-d12\", \"7x6-4453-d16\"); repeatable")
	// No default is shown: without --depth, --root or --job every job is.
	// --root alone takes its depth from generate.depth.
	f.Int("depth", 0, "show the job of depth `D` (generate.depth, also the depth of --root given alone)")
	bindKey(f, "depth", "generate.depth")
	keyFlag(f, "root", "generate.root", "", "show the job of this root `MOVES`")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&watch, "watch", false, "show the status again every --interval until Ctrl-C, with each job's rate and ETA")
	f.DurationVar(&interval, "interval", defaultWatchInterval, "time `D` between two reports of --watch")
	return cmd
}

// defaultWatchInterval is the time between two reports of status --watch:
// that between two reports of a coordinator.
const defaultWatchInterval = coordinator.DefaultStatusEvery

// runStatus prints the status of the jobs named (all jobs if none is), and
// of the workers; with a positive interval, again every interval until
// ctx is done (status.Watch).
func runStatus(ctx context.Context, a *app, cfg config.Config, jobs []string, asJSON bool, interval time.Duration) error {
	for _, id := range jobs {
		if err := queue.ValidJobID(id); err != nil {
			return fmt.Errorf("--job %q: %w", id, err)
		}
	}
	conn, err := jobproc.Connect(ctx, cfg, "c4book status", nil)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	defer conn.Close()
	if interval > 0 {
		return status.ExplainError(cfg.NATS.URL, jobproc.CredentialsSet(cfg.NATS), status.Watch(ctx, a.stdout, console.IsTerminal(a.stdout), conn, jobs, interval))
	}
	rep, err := status.Read(ctx, conn, jobs)
	if errors.Is(err, queue.ErrNotReady) {
		return fmt.Errorf("no coordinator has set up the queue on %s yet: %w", cfg.NATS.URL, err)
	}
	if err != nil {
		return status.ExplainError(cfg.NATS.URL, jobproc.CredentialsSet(cfg.NATS), err)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	status.Print(a.stdout, rep, time.Now(), nil)
	return nil
}
