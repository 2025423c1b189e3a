package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

const generateLong = `Build an opening book: the exact score of every position reachable from
the root (--root, default the empty board) with at most D stones (--depth).

Without a NATS URL (nats.url, --nats) everything runs in this process: an
embedded NATS server with JetStream, whose data lives in nats.store-dir
(default: the directory "nats" inside the book directory), the coordinator,
and one worker solving with N threads (--workers, default worker.concurrency,
0 there meaning one per CPU), sharing one transposition table of
solver.tt-size. With --nats URL the job goes through that server instead,
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
	addTTSizeFlag(f)
	return cmd
}

// addJobFlags adds the flags of a job shared by generate and coordinator.
func addJobFlags(f *pflag.FlagSet) {
	def := config.Default()
	f.Int("depth", def.Generate.Depth, "depth `D` of the book: the most stones of its positions (generate.depth)")
	bindKey(f, "depth", "generate.depth")
	f.String("root", def.Generate.Root, "`MOVES` of the position the book starts from; empty: the empty board (generate.root)")
	bindKey(f, "root", "generate.root")
	f.String("book", def.Book.Path, "book directory `PATH`, created if needed in an existing directory (book.path)")
	bindKey(f, "book", "book.path")
	f.Int("task-size", def.Queue.TaskSize, "`N` positions in one task (queue.task-size)")
	bindKey(f, "task-size", "queue.task-size")
	f.Float64("cross-check", def.Queue.CrossCheck, "`FRACTION` of tasks solved twice by different workers and compared (queue.cross-check)")
	bindKey(f, "cross-check", "queue.cross-check")
	f.String("nats", def.NATS.URL, "`URL` of the NATS server to use instead of the embedded one (nats.url)")
	bindKey(f, "nats", "nats.url")
	f.String("listen", def.NATS.Listen, "`HOST:PORT` on which the embedded server accepts remote workers; needs nats.token or nats.user/nats.password (nats.listen)")
	bindKey(f, "listen", "nats.listen")
	addMetricsFlag(f)
}

// jobOptions says how a command runs a job.
type jobOptions struct {
	command string // "generate" or "coordinator", for messages and client names
	workers int    // solving threads of the local worker; 0: none
}

// jobRun is the state of a running job: the book, the server, the
// connections and the local worker, closed in reverse order.
type jobRun struct {
	a       *app
	cfg     config.Config
	opts    jobOptions
	spec    coordinator.Spec
	console *console
	log     *slog.Logger

	metrics  *metricsServer // nil without metrics.listen
	jm       *coordinator.Metrics
	counters *worker.Counters // the local worker's, if any

	book    *book.Book
	snap    snapshotter
	server  *queue.Server // nil with nats.url
	conn    *queue.Conn   // the coordinator's
	workers sync.WaitGroup
	stopWkr context.CancelFunc
	wkrErr  error

	keys         bool   // the embedded server knows workers by their keys: follow the registry
	stopRegistry func() // stops followRegistry, if it runs
}

// runJob runs the job of cfg (generate.*) as opts says, prints the
// summary and returns the command's error.
func runJob(ctx context.Context, a *app, cfg config.Config, opts jobOptions) (err error) {
	if cfg.NATS.URL != "" && cfg.NATS.Listen != "" {
		return fmt.Errorf("nats.url (%s) and nats.listen (%s) are both set: use an external server or listen with the embedded one, not both", cfg.NATS.URL, cfg.NATS.Listen)
	}
	if cfg.NATS.URL == "" && cfg.NATS.Listen != "" && !cfg.NATS.HasAuth() {
		// Registered workers are authentication too: the book says.
		if err := checkListenAuth(cfg, bookHasWorkers(cfg.Book.Path)); err != nil {
			return err
		}
	}
	board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
	if err != nil {
		return fmt.Errorf("board.width, board.height: %w", err)
	}
	r := &jobRun{
		a: a, cfg: cfg, opts: opts,
		spec:    coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth, TaskSize: cfg.Queue.TaskSize},
		console: newConsole(a.stderr, isTerminal(a.stderr), newLogStyle(cfg.Log)),
	}
	if _, err := r.spec.Validate(); err != nil {
		return err
	}
	r.console.width = terminalWidth(a.stderr)
	r.log = r.console.logger()
	defer func() {
		if cerr := r.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	r.jm = coordinator.NewMetrics()
	collectors := r.jm.Collectors()
	if opts.workers > 0 {
		r.counters = new(worker.Counters)
		collectors = append(collectors, r.counters.Collector(opts.workers))
	}
	// Served from the start: healthy while waiting for the server too.
	if r.metrics, err = startMetrics(cfg.Metrics.Listen, r.log, collectors...); err != nil {
		return err
	}
	if err := r.open(ctx); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	r.snap.start(ctx, r.book, cfg.Book.SnapshotInterval, r.log)
	if r.keys {
		// After the snapshots start: a change of the registry takes one.
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		r.stopRegistry = func() { cancel(); <-done }
		go func() {
			defer close(done)
			followRegistry(rctx, r.book, r.spec.ID(), r.server, &r.snap, r.log.With("role", "registry"))
		}()
	}
	if opts.workers > 0 {
		if err := r.startWorker(ctx); err != nil {
			return err
		}
	}

	progressCtx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		r.console.run(progressCtx)
	}()
	sum, err := coordinator.Run(ctx, coordinator.Config{
		Spec: r.spec, Book: r.book, Queue: r.jm.Queue(r.conn),
		Stream: queue.StreamConfig{AckWait: cfg.Queue.AckWait, MaxDeliver: cfg.Queue.MaxDeliver, Replicas: cfg.Queue.Replicas},
		Log:    r.log.With("role", "coordinator"),
		Progress: func(p coordinator.Progress) {
			r.console.update(p)
			r.jm.Progress(p)
			r.snap.phase(p.Phase)
		},
		OnResult:          r.jm.Result,
		OnQuarantine:      r.refuseQuarantined,
		CrossCheck:        crossCheck(cfg),
		QuarantineAfter:   cfg.Queue.QuarantineAfter,
		RefereeTableBytes: int64(cfg.Solver.TTSize),
		MinFreeBytes:      int64(cfg.Book.MinFree),
	})
	stopProgress()
	<-progressDone
	r.console.stop()
	r.console.quieten()
	r.stopWorker()
	switch {
	case ctx.Err() != nil:
		r.jm.SetPhase(book.JobStopped)
	case err != nil:
		r.jm.SetPhase(book.JobFailed)
	default:
		r.jm.SetPhase(book.JobDone)
	}

	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(a.stderr, "Interrupted: the book %s holds every result stored so far (%s positions solved in this run). Run the same command again to resume.\n",
			cfg.Book.Path, formatCount(sum.Solved))
		return errInterrupted
	case sum.AlreadyDone:
		fmt.Fprintf(a.stdout, "Job %s is already complete in %s (%s positions): nothing to do.\n", sum.JobID, cfg.Book.Path, formatCount(sum.Positions))
		return nil
	case errors.Is(err, coordinator.ErrTasksFailed):
		printSummary(a.stdout, cfg, sum)
		printFailed(a.stderr, sum.Failed)
		return fmt.Errorf("job %s is incomplete: %w", sum.JobID, err)
	case err != nil:
		return fmt.Errorf("job %s: %w", r.spec.ID(), err)
	}
	printSummary(a.stdout, cfg, sum)
	if r.wkrErr != nil {
		return fmt.Errorf("the local worker: %w", r.wkrErr)
	}
	return nil
}

// localOnly reports whether the job of cfg can have no worker but its own:
// an embedded server that listens on no address.
func localOnly(cfg config.Config) bool { return cfg.NATS.URL == "" && cfg.NATS.Listen == "" }

// refuseQuarantined has the embedded server refuse the key of a worker
// the job quarantined (coordinator.Config.OnQuarantine): its connections
// are closed, and it takes no more of the job's tasks.
func (r *jobRun) refuseQuarantined(worker string) {
	if !r.keys {
		return
	}
	keys, err := activeWorkers(r.book, r.spec.ID())
	if err == nil {
		err = r.server.SetWorkers(keys)
	}
	if err != nil {
		r.log.Warn("refusing a quarantined worker's key: it may go on taking tasks", "worker", worker, "error", err)
		return
	}
	r.log.Warn("the quarantined worker's key is refused by the server until the job ends", "worker", worker)
}

// crossCheck returns the fraction of tasks the job of cfg cross-checks:
// queue.cross-check, but none when the job's own worker is its only one
// (there is nobody to check it against: every check would be skipped,
// after solving the task twice).
func crossCheck(cfg config.Config) float64 {
	if localOnly(cfg) {
		return 0
	}
	return cfg.Queue.CrossCheck
}

// open opens (or creates) the book, then starts the embedded server or
// connects to nats.url.
func (r *jobRun) open(ctx context.Context) error {
	cfg := r.cfg
	bk, err := book.Open(cfg.Book.Path, &book.Options{Create: true, Board: r.spec.Board,
		CacheBytes: int64(cfg.Book.CacheSize), MemTableBytes: int64(cfg.Book.MemTableSize)})
	if err != nil {
		return err
	}
	r.book = bk
	r.metrics.register(bk.Collectors()...)
	name := "c4book " + r.opts.command
	if cfg.NATS.URL != "" {
		r.conn, err = connect(ctx, cfg, name, r.console.quietLogger().With("role", "nats"))
		r.console.extra = r.workerCount
		return err
	}
	// The book is opened first: it then holds a Pebble database, and the
	// server's directory inside it is not mistaken for a stray file.
	var workers []queue.WorkerKey // nil: no keys
	if cfg.NATS.Listen != "" {
		ws, err := activeWorkers(bk, r.spec.ID())
		if err != nil {
			return err
		}
		// Keys on: with registered workers, or beside a token or user
		// (workers may then be added while the job runs). Not with client
		// certificates alone: with keys on, a certificate identifies no
		// one, and the clients that have only one would be refused.
		if len(ws) > 0 || cfg.NATS.Token != "" || cfg.NATS.User != "" {
			workers = ws
		}
	}
	r.server, err = startServer(cfg, workers, r.console.quietLogger().With("role", "nats-server"))
	if err != nil {
		return err
	}
	r.keys = workers != nil
	r.conn, err = r.server.ConnectInProcess(ctx, queue.Options{Name: name})
	if err != nil {
		return err
	}
	if url := r.server.ClientURL(); url != "" {
		fmt.Fprintf(r.a.stdout, "NATS server listening: workers connect to %s\nOn each worker machine run:\n\n    %s\n\n", url, workerCommandLine(cfg, url, len(workers) > 0))
		r.console.extra = r.workerCount
	}
	return nil
}

// workerCount returns "N workers" for the progress line: the workers that
// reported recently.
func (r *jobRun) workerCount() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ws, err := r.conn.Workers(ctx)
	if err != nil {
		return ""
	}
	if len(ws) == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", len(ws))
}

// startWorker starts the local worker with opts.workers threads on a
// connection of its own. It waits for the coordinator to set the queue up.
func (r *jobRun) startWorker(ctx context.Context) error {
	var conn *queue.Conn
	var err error
	name := "c4book " + r.opts.command + " worker"
	if r.server != nil {
		conn, err = r.server.ConnectInProcess(ctx, queue.Options{Name: name})
	} else {
		conn, err = connect(ctx, r.cfg, name, r.console.quietLogger().With("role", "worker-nats"))
	}
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	r.stopWkr = cancel
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		defer conn.Close()
		tasks, err := waitForTasks(wctx, conn, nil)
		if err != nil {
			if wctx.Err() == nil {
				r.wkrErr = err
			}
			return
		}
		// The worker's own messages (a task handed back, ...) are for
		// debugging: only its warnings and errors are shown, unless
		// log.level is debug (logStyle.partLevel).
		wlog := r.console.partLogger().With("role", "worker")
		r.wkrErr = worker.Run(wctx, tasks, conn, worker.Config{
			Concurrency: r.opts.workers,
			TableBytes:  int64(r.cfg.Solver.TTSize),
			Heartbeat:   heartbeat(r.cfg.Queue.AckWait),
			Log:         wlog,
			Counters:    r.counters,
		})
	}()
	return nil
}

// heartbeat returns how often a worker reports a task in progress: a third
// of the queue's AckWait, at most worker's default of 10 seconds.
func heartbeat(ackWait time.Duration) time.Duration {
	return min(ackWait/3, 10*time.Second)
}

// stopWorker stops the local worker, if any, and waits for it: tasks it is
// solving are handed back.
func (r *jobRun) stopWorker() {
	if r.stopWkr != nil {
		r.stopWkr()
		r.workers.Wait()
		r.stopWkr = nil
	}
}

// close stops everything the run started: the metrics listener first (its
// collectors read the book), the book last.
func (r *jobRun) close() error {
	r.metrics.close()
	r.stopWorker()
	if r.stopRegistry != nil {
		r.stopRegistry()
	}
	if r.conn != nil {
		r.conn.Close()
	}
	if r.server != nil {
		r.server.Shutdown()
	}
	r.snap.stop()
	if r.book != nil {
		if err := r.book.Close(); err != nil {
			return fmt.Errorf("closing the book: %w", err)
		}
	}
	return nil
}

// snapshotter takes the snapshots of the book of a running job, for
// readers (c4book book get, serve) while the job writes it: every
// book.snapshot-interval, and at the end of planning and of solving.
// Closing the book removes them.
type snapshotter struct {
	bk       *book.Book // nil: no snapshots
	log      *slog.Logger
	cancel   context.CancelFunc
	done     chan struct{}
	last     book.JobState // phase of the last progress report
	mu       sync.Mutex    // guards the failures' report
	failures int           // since the last one logged
	logged   time.Time
}

// start takes snapshots of bk every interval (none if it is 0), the first
// at once, until stop.
func (s *snapshotter) start(ctx context.Context, bk *book.Book, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.bk, s.log, s.done = bk, log, make(chan struct{})
	go func() {
		defer close(s.done)
		bk.SnapshotEvery(ctx, interval, s.taken)
	}()
}

// taken logs a snapshot at level debug, or its failure.
func (s *snapshotter) taken(at time.Time, took time.Duration, err error) {
	if err != nil {
		s.failed(err)
		return
	}
	s.log.Debug("book snapshot taken", "at", at, "took", took)
}

// phase takes a snapshot when the job's phase changes: the plan is
// written, or the leaves are solved. Progress reports come one at a time.
func (s *snapshotter) phase(p book.JobState) {
	if s.last != "" && p != s.last {
		s.take()
	}
	s.last = p
}

// take takes a snapshot now, if snapshots are taken at all
// (book.snapshot-interval not 0).
func (s *snapshotter) take() {
	if s.bk == nil {
		return
	}
	start := time.Now()
	at, err := s.bk.Snapshot()
	s.taken(at, time.Since(start), err)
}

// failed logs a snapshot that failed: the job goes on, readers keep the
// snapshot before. The first failure is logged, then one a minute.
func (s *snapshotter) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if time.Since(s.logged) < time.Minute {
		return
	}
	s.log.Warn("book snapshot failed: readers of the book keep the one before", "error", err, "failures", s.failures)
	s.failures, s.logged = 0, time.Now()
}

// stop stops the snapshots, if any, and waits for the one being taken.
func (s *snapshotter) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
}

// printSummary writes what a run of a job did.
func printSummary(w io.Writer, cfg config.Config, s coordinator.Summary) {
	state := "complete"
	if len(s.Failed) > 0 {
		state = "incomplete"
	}
	fmt.Fprintf(w, "Job %s %s: book %s\n", s.JobID, state, cfg.Book.Path)
	row := func(label, value, note string) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-20s %14s  %s", label, value, note), " "))
	}
	secs := s.Wall.Seconds()
	perSec := func(n float64) string {
		if secs <= 0 {
			return "-"
		}
		return formatRate(n / secs)
	}
	row("positions", formatCount(s.Positions), "")
	row("in the book before", formatCount(s.InBook), "")
	row("solved by workers", formatCount(s.Solved), "")
	row("scored at once", formatCount(s.Immediate), "")
	row("derived", formatCount(s.Derived), "")
	if s.Rejected > 0 {
		row("results rejected", formatCount(s.Rejected), "")
	}
	if s.Unsigned > 0 {
		row("results unsigned", formatCount(s.Unsigned), "(on a registered worker's subject, not signed by its key: refused, not counted against it)")
	}
	if s.Ignored > 0 || len(s.Quarantined) > 0 {
		row("results ignored", formatCount(s.Ignored), "(quarantined: "+strings.Join(s.Quarantined, ", ")+")")
	}
	if s.CrossChecked > 0 || s.Disagreements > 0 {
		row("cross-checked tasks", formatCount(s.CrossChecked+s.Disagreements), crossCheckNote(s))
	}
	switch {
	case cfg.Queue.CrossCheck > 0 && localOnly(cfg):
		row("cross-checks", "skipped", "(the only worker is this process's: nobody to check it against)")
	case s.CrossSkipped > 0:
		row("cross-checks skipped", formatCount(s.CrossSkipped), "(tasks whose copies one worker answered alone, before any other: stored on its word)")
	}
	if len(s.Repaired) > 0 {
		row("queue set up again", fmt.Sprint(len(s.Repaired)), "(deleted while the job ran: "+strings.Join(s.Repaired, ", ")+")")
	}
	if s.Overdue > 0 {
		row("tasks overdue", formatCount(s.Overdue), "(out too long, held by a worker that does not answer or lost from the queue: published again)")
	}
	if s.Requeued > 0 {
		row("solved again", formatCount(s.Requeued), "(positions of workers quarantined after their results were stored)")
	}
	row("wall time", formatSpan(s.Wall), "")
	if cpu, ok := processCPU(); ok {
		row("cpu time", fmt.Sprintf("%.2fs", cpu.Seconds()), "(this process: user and system)")
	}
	row("nodes", formatCount(s.Nodes), "("+perSec(float64(s.Nodes))+"/s)")
	row("positions solved/s", perSec(float64(s.Solved)), "")
	printByWorker(w, s, perSec)
}

// crossCheckNote says how the cross-checked tasks of s were decided: by
// two workers agreeing, or by the coordinator's own solve (when two
// disagreed, or when no other worker took a copy).
func crossCheckNote(s coordinator.Summary) string {
	agreed := s.CrossChecked + s.Disagreements - s.Refereed
	note := fmt.Sprintf("(%s by two workers agreeing, %s by the coordinator's own solve", formatCount(agreed), formatCount(s.Refereed))
	if s.Disagreements > 0 {
		note += fmt.Sprintf(": %s disagreements", formatCount(s.Disagreements))
	}
	return note + ")"
}

// printByWorker writes the summary's lines by worker: the positions each
// solved, and what the coordinator made of its results (accepted,
// rejected, and the cross-checks passed and failed when tasks were
// cross-checked).
func printByWorker(w io.Writer, s coordinator.Summary, perSec func(float64) string) {
	ids := slices.Sorted(maps.Keys(s.ByWorker))
	for id := range s.Workers {
		if _, ok := s.ByWorker[id]; !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	cross := s.CrossChecked > 0 || s.Disagreements > 0
	fmt.Fprintln(w, "  by worker:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, id := range ids {
		n := s.ByWorker[id]
		share := 0.0
		if s.Solved > 0 {
			share = 100 * float64(n) / float64(s.Solved)
		}
		c := s.Workers[id]
		fmt.Fprintf(tw, "    %s	%s positions	%.1f%%	%s/s	%s results accepted	%s rejected", id, formatCount(n), share, perSec(float64(n)),
			formatCount(c.Accepted), formatCount(c.Rejected))
		if cross {
			fmt.Fprintf(tw, "	cross-checks %s passed	%s failed", formatCount(c.CrossPassed), formatCount(c.CrossFailed))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// maxFailedShown is the number of failed tasks listed.
const maxFailedShown = 10

// printFailed lists the tasks given up on, with a few of their positions.
func printFailed(w io.Writer, failed []coordinator.FailedTask) {
	for i, f := range failed {
		if i == maxFailedShown {
			fmt.Fprintf(w, "... and %d more failed tasks\n", len(failed)-maxFailedShown)
			break
		}
		moves := f.Moves
		more := ""
		if len(moves) > 3 {
			moves, more = moves[:3], fmt.Sprintf(" and %d more", len(f.Moves)-3)
		}
		fmt.Fprintf(w, "failed task %d: positions %s%s\n", f.Index, strings.Join(moves, " "), more)
	}
}
