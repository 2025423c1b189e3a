package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/cmd/c4book/internal/metrics"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/worker"
)

const workerLong = `Join a generation job as a worker: connect to the NATS server of a
coordinator (--nats URL, nats.url), take tasks, solve their positions and
send back the exact scores, until stopped.

The worker runs --concurrency threads (worker.concurrency; 0, the default,
is one per CPU), sharing one transposition table of --tt-size
(worker.tt-size; 256MiB, or a quarter of the machine's memory if less) that
stays warm from one task to the next. Credentials and
TLS come from nats.nkey (--nkey: the worker's own key file, made by
"c4book worker add" on the coordinator's machine, which also names the
worker), nats.token, nats.user and nats.password, nats.creds and
nats.tls.*; a server that refuses them makes the command fail at once.
A server that does not answer (not started yet, restarting, gone for an
hour) is waited for, and so is a coordinator that has not set up the
queue yet: the worker says what it waits for at once, then once a minute
with how long it has waited, and tries again. It serves every job on the
server, one after the other.

On a machine that belongs to someone, the worker minds its owner:
--max-cpu N or P% (worker.max-cpu) takes at most N threads or that share
of the CPUs; --hours FROM-TO (worker.hours, "22:00-07:00") works only in
that daily window of local time; --pause-when-busy P (worker.pause-when-busy)
pauses while the machine's other programs keep more than P% of its CPUs
busy for --pause-hold (30s), and resumes once they have been quieter as
long. A paused worker hands its tasks back at once, takes none, says in
its log and in "c4book status" that it paused and why, keeps its table
warm, and resumes by itself. Every 30 seconds (5 minutes with
--log-format json) it logs what it did: the job, tasks and positions
solved, the rate.

Ctrl-C hands the tasks being solved back to the queue at once (another
worker takes them), or stops the waiting, and exits with status 130. With
--exit-when-idle D the worker leaves, with status 0, once no task came for
D, waits for the server and the queue included: the job is done or other
workers hold the rest.`

const workerExample = `  c4book worker --nats nats://coordinator:4222 --nkey lab-3.nkey
  C4BOOK_NATS_TOKEN=s3cret c4book worker --nats nats://coordinator:4222
  c4book worker --nats tls://coordinator:4222 --concurrency 8 --tt-size 1GiB --exit-when-idle 5m
  c4book worker --nats nats://coordinator:4222 --nkey lab-3.nkey --max-cpu 50% --hours 22:00-07:00 --pause-when-busy 25`

// newWorkerCommand builds "c4book worker".
func newWorkerCommand(a *app) *cobra.Command {
	var idle time.Duration
	var id string
	cmd := &cobra.Command{
		Use:     "worker --nats URL [--nkey FILE] [--concurrency N] [--tt-size SIZE] [--exit-when-idle DURATION]",
		Short:   "Solve the tasks of generation jobs from a NATS server",
		Long:    workerLong,
		Example: workerExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if idle < 0 {
				return newUsageError(cmd, fmt.Errorf("--exit-when-idle %v: must be 0 (never) or more", idle))
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.NATS.URL == "" {
				return newUsageError(cmd, errors.New("--nats URL (nats.url) is required: the NATS server of the coordinator, such as nats://host:4222"))
			}
			if cfg.NATS.NKey != "" {
				// The key names the worker: the server lets it publish
				// under that name only.
				k, err := queue.ReadKey(cfg.NATS.NKey)
				if err != nil {
					return fmt.Errorf("nats.nkey: %w", err)
				}
				if k.Role == queue.RoleObserver {
					return fmt.Errorf("nats.nkey (%s) is observer %s's key, which may only read the cluster's status (c4book status --nkey %s): "+
						"a worker needs a worker's key (c4book worker add NAME on the coordinator's machine)", cfg.NATS.NKey, k.Name, cfg.NATS.NKey)
				}
				if id != "" && id != k.Name {
					return newUsageError(cmd, fmt.Errorf("--id %s: the key file %s is worker %s's, and the server lets it publish under that name only", id, cfg.NATS.NKey, k.Name))
				}
				id = k.Name
			}
			return runWorker(cmd.Context(), a, cfg, id, idle)
		},
	}
	f := cmd.Flags()
	def := config.Default()
	keyFlag(f, "nats", "nats.url", "", "`URL` of the coordinator's NATS server")
	keyFlag(f, "concurrency", "worker.concurrency", def.Worker.Concurrency, "`N` solving threads; 0: one per CPU")
	keyFlag(f, "max-cpu", "worker.max-cpu", def.Worker.MaxCPU, "take at most `N` threads (\"2\") or a share of the machine's CPUs (\"50%\")")
	keyFlag(f, "hours", "worker.hours", def.Worker.Hours, "work only in the daily window `FROM-TO` of local time (\"22:00-07:00\"); paused outside it")
	keyFlag(f, "pause-when-busy", "worker.pause-when-busy", def.Worker.PauseWhenBusy, "pause while other programs keep more than `PERCENT` of the CPUs busy; 0: never")
	keyFlag(f, "pause-hold", "worker.pause-hold", def.Worker.PauseHold, "how long (`DURATION`) the machine must stay busy before a pause, or quiet before the worker resumes")
	addWorkerTTSizeFlag(f)
	addMetricsFlag(f)
	f.DurationVar(&idle, "exit-when-idle", 0, "leave once no task came for this `DURATION` (0: never)")
	f.StringVar(&id, "id", "", "`NAME` of the worker in results and status (default HOST-PID; with --nkey, the key's name)")
	keyFlag(f, "nkey", "nats.nkey", "", "the worker's key `FILE`, made by c4book worker add")
	cmd.AddCommand(newWorkerAddCommand(a), newWorkerRemoveCommand(a), newWorkerListCommand(a), newWorkerConfCommand(a))
	return cmd
}

// runWorker runs a worker configured by cfg until ctx is done or it is
// idle for idle (if positive).
func runWorker(ctx context.Context, a *app, cfg config.Config, id string, idle time.Duration) error {
	inject, err := faultInjection(a.stderr) // none but in tests' builds
	if err != nil {
		return err
	}
	out := console.New(a.stderr, false, console.NewStyle(cfg.Log))
	log := out.Logger().With("role", "worker")
	host, _ := os.Hostname()
	n := cfg.WorkerThreads(runtime.NumCPU())
	// Served from the start: healthy while waiting for the server too.
	counters := new(worker.Counters)
	metricsServer, err := metrics.Start(cfg.Metrics.Listen, log, counters.Collector(n))
	if err != nil {
		return err
	}
	defer metricsServer.Close()

	// The waits for the server and for the queue count as idle time.
	waitCtx, cancel := ctx, context.CancelFunc(func() {})
	if idle > 0 {
		waitCtx, cancel = context.WithTimeout(ctx, idle)
	}
	defer cancel()
	conn, err := jobproc.ConnectWaiting(waitCtx, cfg, "c4book worker "+host, out.QuietLogger().With("role", "nats"), log)
	switch {
	case ctx.Err() != nil:
		return errInterrupted
	case err != nil && waitCtx.Err() != nil:
		fmt.Fprintf(a.stderr, "No NATS server answered within %v: leaving.\n", idle)
		return nil
	case err != nil:
		return err
	}
	defer func() {
		out.Quieten() // the connection's closing is no news
		conn.Close()
	}()
	fmt.Fprintln(a.stderr, connectedLine(conn.ConnectedURL(), n, cfg.Worker.TTSize))

	tasks, err := jobproc.WaitForTasks(waitCtx, conn, log)
	cancel()
	switch {
	case ctx.Err() != nil:
		return errInterrupted
	case err != nil && waitCtx.Err() != nil:
		fmt.Fprintf(a.stderr, "No coordinator set up the queue within %v: leaving.\n", idle)
		return nil
	case err != nil:
		return fmt.Errorf("binding to the task queue: %w", err)
	}
	var pub worker.Publisher = conn
	if inject != nil {
		var done func()
		pub, done = inject(pub)
		defer done()
	}
	progressCtx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		reportWorkerProgress(progressCtx, log, counters, workerProgressEvery(cfg))
	}()
	err = worker.RunGated(ctx, tasks, pub, worker.Config{
		ID:          id,
		Concurrency: n,
		TableBytes:  int64(cfg.Worker.TTSize),
		IdleExit:    idle,
		Log:         log,
		Counters:    counters,
	}, workerGate(cfg))
	stopProgress()
	<-progressDone
	switch {
	case err != nil && cfg.NATS.NKey != "" && errors.Is(err, queue.ErrClosed):
		return fmt.Errorf("%w (the server closed the connection: if it refused the key of nats.nkey, this worker was removed: c4book worker list on the coordinator's machine)", err)
	case err != nil:
		return err
	case ctx.Err() != nil:
		return errInterrupted
	}
	return nil
}

// connectedLine is what a worker says once connected to url: its n
// solving threads and their table, of size table, which they share (one
// table, not one a thread: what one thread finds the others use).
func connectedLine(url string, n int, table config.Size) string {
	if n == 1 {
		return fmt.Sprintf("Connected to %s: 1 solving thread, with a table of %v.", url, table)
	}
	return fmt.Sprintf("Connected to %s: %d solving threads, sharing one table of %v.", url, n, table)
}

// Progress of a worker in its own log: every workerProgressText on a text
// log (a terminal), every workerProgressJSON in JSON (a service's journal,
// which keeps every line). A variable for tests.
var (
	workerProgressText = 30 * time.Second
	workerProgressJSON = 5 * time.Minute
)

// workerProgressEvery returns how often a worker of cfg says what it did.
func workerProgressEvery(cfg config.Config) time.Duration {
	if cfg.Log.Format == "json" {
		return workerProgressJSON
	}
	return workerProgressText
}

// reportWorkerProgress logs, every interval until ctx is done, what the
// worker has done: tasks and positions solved, the rate of the interval,
// the threads busy and the job of its last task; once when it has nothing
// to do, until it has again.
func reportWorkerProgress(ctx context.Context, log *slog.Logger, c *worker.Counters, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	start := time.Now()
	lastSolved, lastTime, saidIdle := uint64(0), start, false
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			solved, busy := c.Solved.Load(), c.Busy.Load()
			if solved == lastSolved && busy == 0 {
				if !saidIdle {
					log.Info("no task: waiting for one", "tasks", c.Tasks.Load(), "positions", solved)
					saidIdle = true
				}
				continue
			}
			saidIdle = false
			rate := float64(solved-lastSolved) / now.Sub(lastTime).Seconds()
			log.Info("solving", "job", c.LastJob(), "tasks", c.Tasks.Load(), "positions", solved,
				"rate", human.Rate(rate)+"/s", "busy_threads", busy, "for", human.Span(now.Sub(start)))
			lastSolved, lastTime = solved, now
		}
	}
}

// workerGate returns the gate of a worker of cfg (worker.Gate): closed
// outside worker.hours, and while the machine is busy past
// worker.pause-when-busy; nil, always open, with neither. cfg is valid.
func workerGate(cfg config.Config) worker.Gate {
	var gates worker.Gates
	if cfg.Worker.Hours != "" {
		h, _ := worker.ParseHours(cfg.Worker.Hours)
		gates = append(gates, h)
	}
	if p := cfg.Worker.PauseWhenBusy; p > 0 {
		gates = append(gates, &worker.Busy{Above: float64(p) / 100, Hold: cfg.Worker.PauseHold})
	}
	if len(gates) == 0 {
		return nil
	}
	return gates
}
