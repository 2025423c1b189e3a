package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/cmd/c4book/internal/metrics"
	"github.com/c4book/c4book/cmd/c4book/internal/summary"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
)

const generateLong = `Build an opening book: the exact score of every position reachable from
the root (--root, default the empty board) with at most D stones (--depth).

Without a NATS URL (nats.url, --nats) everything runs in this process: an
embedded NATS server with JetStream, whose data lives in nats.store-dir
(default: the directory "nats" inside the book directory), the coordinator,
and one worker solving with N threads (--workers, default worker.concurrency,
0 there meaning one per CPU), sharing one transposition table of
worker.tt-size (--tt-size; 256MiB, or a quarter of the machine's memory if
less). With --nats URL the job goes through that server instead,
so workers on other machines (c4book worker --nats URL) help the local one;
--workers 0 runs no local worker.

The book (book.path, --book) is created if needed, for the board of --width
and --height, in a directory that exists: only the book's own directory is
made, so that a mistyped path starts no new book elsewhere. Progress is
shown on standard error: a bar on a terminal, a line every 10 seconds
otherwise. At the end a summary is printed.

While the job runs, the book can be read (c4book book get, stats, export,
verify, serve) from a snapshot the job leaves in it when it starts, every
book.snapshot-interval (default 1m; 0: none) and at the end of planning
and of solving; the job removes them when it closes the book.

The book is the truth: Ctrl-C hands the tasks being solved back, stops the
job with the book consistent and exits with status 130; running the same
command again resumes where it stopped, and running it on a finished job
says there is nothing to do. Tasks that keep failing make the command fail
(status 1) after the rest of the job is done; running it again retries them.`

const generateExample = `  c4book generate --depth 8
  c4book generate --depth 16 --root 44444433 --book 44444433.db
  c4book generate --width 5 --height 4 --depth 10 --book 5x4.db --workers 2
  c4book generate --depth 12 --nats nats://coordinator:4222 --workers 0`

// newGenerateCommand builds "c4book generate".
func newGenerateCommand(a *app) *cobra.Command {
	var workers int
	cmd := &cobra.Command{
		Use:     "generate --depth D [--root MOVES] [--book PATH] [--workers N] [--nats URL]",
		Short:   "Build an opening book to a depth, on this machine or with remote workers",
		Long:    generateLong,
		Example: generateExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			n := cfg.Worker.Concurrency
			if cmd.Flags().Changed("workers") {
				if workers < 0 {
					return newUsageError(cmd, fmt.Errorf("--workers %d: must be 0 (no local worker) or more", workers))
				}
				n = workers
			} else if n == 0 {
				n = runtime.NumCPU()
			}
			if n == 0 && cfg.NATS.URL == "" && cfg.NATS.Listen == "" {
				return newUsageError(cmd, errors.New("--workers 0 with the embedded server and no --listen: no worker could ever solve a position; give --nats URL or --listen HOST:PORT for remote workers, or local workers"))
			}
			return runJob(cmd.Context(), a, cfg, jobOptions{command: "generate", workers: n})
		},
	}
	f := cmd.Flags()
	addJobFlags(f)
	f.IntVar(&workers, "workers", 0, "`N` solving threads of the local worker; 0: none (default worker.concurrency, 0 there meaning one per CPU)")
	addWorkerTTSizeFlag(f)
	return cmd
}

// addJobFlags adds the flags of a job shared by generate and coordinator.
func addJobFlags(f *pflag.FlagSet) {
	def := config.Default()
	keyFlag(f, "depth", "generate.depth", def.Generate.Depth, "depth `D` of the book: the most stones of its positions")
	keyFlag(f, "root", "generate.root", def.Generate.Root, "`MOVES` of the position the book starts from; empty: the empty board")
	keyFlag(f, "book", "book.path", def.Book.Path, "book directory `PATH`, created if needed in an existing directory")
	keyFlag(f, "task-size", "queue.task-size", def.Queue.TaskSize, "`N` positions in one task")
	keyFlag(f, "cross-check", "queue.cross-check", def.Queue.CrossCheck, "`FRACTION` of tasks solved twice by different workers and compared")
	keyFlag(f, "nats", "nats.url", def.NATS.URL, "`URL` of the NATS server to use instead of the embedded one")
	keyFlag(f, "listen", "nats.listen", def.NATS.Listen, "`HOST:PORT` on which the embedded server accepts remote workers, each with its key (c4book worker add), or with nats.token, nats.user/nats.password or client certificates")
	addMetricsFlag(f)
}

// jobOptions says how a command runs a job.
type jobOptions struct {
	command string // "generate" or "coordinator", for messages and client names
	workers int    // solving threads of the local worker; 0: none
}

// runJob runs the job of cfg (generate.*) as opts says, showing its
// progress on the console, prints the summary and returns the command's
// error.
func runJob(ctx context.Context, a *app, cfg config.Config, opts jobOptions) (err error) {
	out := console.New(a.stderr, console.IsTerminal(a.stderr), console.NewStyle(cfg.Log))
	out.Width = console.TerminalWidth(a.stderr)
	log := out.Logger()
	p, err := jobproc.New(jobproc.Options{
		Config: cfg, Command: opts.command, Workers: opts.workers,
		Log: log, PartLog: out.PartLogger(), NATSLog: out.QuietLogger(),
		Progress: out.Update,
		Listening: func(url string, keys bool) {
			fmt.Fprintf(a.stdout, "NATS server listening: workers connect to %s\nOn each worker machine run:\n\n    %s\n\n", url, workerCommandLine(cfg, url, keys))
		},
		RegistryPoll: registryPoll,
	})
	if err != nil {
		return err
	}
	// Served from the start: healthy while waiting for the server too.
	metricsServer, err := metrics.Start(cfg.Metrics.Listen, log)
	if err != nil {
		return err
	}
	defer func() {
		metricsServer.Close() // before the book its collectors read
		if cerr := p.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := p.Start(ctx, metricsServer.Registerer()); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if !jobproc.LocalOnly(cfg) {
		out.Extra = p.WorkerCount
	}

	progressCtx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		out.Run(progressCtx)
	}()
	sum, err := p.Run(ctx, func() {
		stopProgress()
		<-progressDone
		out.Stop()
		out.Quieten()
	})

	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(a.stderr, "Interrupted: the book %s holds every result stored so far (%s positions solved in this run). Run the same command again to resume.\n",
			cfg.Book.Path, human.Count(sum.Solved))
		return errInterrupted
	case sum.AlreadyDone:
		fmt.Fprintf(a.stdout, "Job %s is already complete in %s (%s positions): nothing to do.\n", sum.JobID, cfg.Book.Path, human.Count(sum.Positions))
		return nil
	case errors.Is(err, coordinator.ErrTasksFailed):
		summary.Write(a.stdout, sum, summaryOptions(cfg))
		summary.WriteFailed(a.stderr, sum.Failed)
		return fmt.Errorf("job %s is incomplete: %w", sum.JobID, err)
	case err != nil:
		return fmt.Errorf("job %s: %w", p.Spec().ID(), err)
	}
	summary.Write(a.stdout, sum, summaryOptions(cfg))
	if err := p.WorkerErr(); err != nil {
		return fmt.Errorf("the local worker: %w", err)
	}
	return nil
}

// summaryOptions returns what the summary of a job run with cfg tells
// beyond the job's figures.
func summaryOptions(cfg config.Config) summary.Options {
	cpu, _ := processCPU()
	return summary.Options{Book: cfg.Book.Path, Alone: cfg.Queue.CrossCheck > 0 && jobproc.LocalOnly(cfg), CPU: cpu}
}
