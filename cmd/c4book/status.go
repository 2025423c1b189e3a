package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

const statusLong = `Show the jobs and the workers of a NATS server (--nats URL, nats.url).

Jobs: state, positions solved of those to solve, failed tasks, when the
job started and when its coordinator last reported. Every job a
coordinator reported to the server is shown, or only those named with
--job and the job of --depth and --root (with --width and --height) when
either is given.

Workers: id, host, positions solved, tasks done, rate (positions solved
per second since the worker started, as of its last report), whether it
is on a task, and when it last reported (every 15 seconds; a worker silent
for two minutes is gone from the list).

--json prints one JSON object {"jobs": [...], "workers": [...]} with the
fields of the coordinator's and the workers' reports, and "rate".`

const statusExample = `  c4book status --nats nats://coordinator:4222
  c4book status --nats nats://coordinator:4222 --depth 12 --json`

// newStatusCommand builds "c4book status".
func newStatusCommand(a *app) *cobra.Command {
	var jobs []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status --nats URL [--job ID]... [--depth D] [--root MOVES] [--json]",
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
			if cmd.Flags().Changed("depth") || cmd.Flags().Changed("root") {
				board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
				if err != nil {
					return err
				}
				spec := coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth}
				jobs = append(jobs, spec.ID())
			}
			return runStatus(cmd.Context(), a, cfg, jobs, asJSON)
		},
	}
	f := cmd.Flags()
	f.String("nats", "", "`URL` of the NATS server (nats.url)")
	bindKey(f, "nats", "nats.url")
	f.StringArrayVar(&jobs, "job", nil, "show the job `ID` (\"7x6-d12\", \"7x6-4453-d16\"); repeatable")
	// No default is shown: without --depth, --root or --job every job is.
	// --root alone takes its depth from generate.depth.
	f.Int("depth", 0, "show the job of depth `D` (generate.depth, also the depth of --root given alone)")
	bindKey(f, "depth", "generate.depth")
	f.String("root", "", "show the job of this root `MOVES` (generate.root)")
	bindKey(f, "root", "generate.root")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// workerReport is a worker's status with its rate, as status prints it.
type workerReport struct {
	queue.WorkerStatus
	Rate float64 `json:"rate"` // positions solved per second from Started to Seen
}

// statusReport is what status prints.
type statusReport struct {
	Jobs    []queue.JobStatus `json:"jobs"`
	Missing []string          `json:"missing,omitempty"` // jobs asked for that have no status
	Workers []workerReport    `json:"workers"`
}

// runStatus prints the status of the jobs named (all jobs if none is), and
// of the workers.
func runStatus(ctx context.Context, a *app, cfg config.Config, jobs []string, asJSON bool) error {
	conn, err := connect(ctx, cfg, "c4book status", nil)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	defer conn.Close()
	ws, err := conn.Workers(ctx)
	if errors.Is(err, queue.ErrNotReady) {
		return fmt.Errorf("no coordinator has set up the queue on %s yet: %w", cfg.NATS.URL, err)
	}
	if err != nil {
		return err
	}
	rep := statusReport{Jobs: []queue.JobStatus{}, Workers: []workerReport{}}
	for _, w := range ws {
		rep.Workers = append(rep.Workers, workerReport{WorkerStatus: w, Rate: workerRate(w)})
	}
	if len(jobs) == 0 {
		all, err := conn.Jobs(ctx)
		if err != nil {
			return err
		}
		rep.Jobs = append(rep.Jobs, all...)
	}
	for _, id := range jobs {
		if err := queue.ValidJobID(id); err != nil {
			return fmt.Errorf("--job %q: %w", id, err)
		}
		s, err := conn.JobStatus(ctx, id)
		switch {
		case errors.Is(err, queue.ErrNotFound):
			rep.Missing = append(rep.Missing, id)
			continue
		case err != nil:
			return err
		}
		rep.Jobs = append(rep.Jobs, s)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printStatus(a.stdout, rep, time.Now())
	return nil
}

// workerRate returns the positions a worker solved per second, from its
// start to its last report.
func workerRate(w queue.WorkerStatus) float64 {
	if d := w.Seen.Sub(w.Started).Seconds(); d > 0 {
		return float64(w.Solved) / d
	}
	return 0
}

// printStatus writes rep as two tables, times relative to now.
func printStatus(w io.Writer, rep statusReport, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rep.Jobs) == 0 {
		fmt.Fprintln(w, "Jobs: none reported.")
	} else {
		// DONE and TOTAL count the positions of the phase the job is in:
		// made while planning, solved while solving, scored while deriving.
		fmt.Fprintln(tw, "JOB\tSTATE\tDONE\tTOTAL\t%\tFAILED\tSTARTED\tUPDATED")
		for _, j := range rep.Jobs {
			pct := "-"
			if j.Total > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(j.Done)/float64(j.Total))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", j.JobID, j.State, formatCount(j.Done), formatCount(j.Total), pct, j.Failed,
				j.Started.Local().Format(time.DateTime), ago(now, j.Updated))
		}
		tw.Flush()
	}
	for _, j := range rep.Jobs {
		if j.Message != "" {
			fmt.Fprintf(w, "Job %s: %s\n", j.JobID, j.Message)
		}
		if len(j.Quarantined) > 0 {
			fmt.Fprintf(w, "Job %s: quarantined workers (results ignored): %s\n", j.JobID, strings.Join(j.Quarantined, ", "))
		}
	}
	for _, id := range rep.Missing {
		fmt.Fprintf(w, "Job %s: no status on this server.\n", id)
	}
	fmt.Fprintln(w)
	if len(rep.Workers) == 0 {
		fmt.Fprintln(w, "Workers: none seen in the last two minutes.")
		return
	}
	fmt.Fprintln(tw, "WORKER\tHOST\tSOLVED\tTASKS\tRATE/S\tBUSY\tJOB\tLAST SEEN")
	for _, s := range rep.Workers {
		busy := "no"
		if s.Busy {
			busy = "yes"
		}
		job := s.JobID
		if job == "" {
			job = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.WorkerID, s.Host, formatCount(s.Solved), formatCount(s.Tasks),
			formatRate(s.Rate), busy, job, ago(now, s.Seen))
	}
	tw.Flush()
}

// ago writes how long before now t was: "3s ago".
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return formatSpan(d.Round(time.Second)) + " ago"
}
