// Package jobproc runs the process of a generation job, the one that
// c4book generate and c4book coordinator both start: the book, the NATS
// server (embedded, or nats.url), the coordinator, the local worker, the
// follower of the worker registry, the book's snapshots and the job's
// metrics, started in order and stopped in reverse. It also connects the
// other processes of a job (worker, status, serve) to its server as the
// configuration says (nats.go).
//
// What a person sees (the progress bar, the summary, the exit status) is
// the command's: a Process reports through Options' loggers and
// callbacks, so tests run a whole job without a command line.
package jobproc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// Options says how a process runs its job.
type Options struct {
	// Config is the job's configuration: generate.*, book.*, nats.*,
	// queue.*, solver.*, checked by config.Validate.
	Config config.Config

	// Command is "generate" or "coordinator": it names the process's
	// connections in the server's monitoring.
	Command string

	// Workers is the number of solving threads of the local worker; 0
	// runs none.
	Workers int

	// Log receives the process's own messages; PartLog those of the
	// local worker, whose own information is for debugging; NATSLog
	// those of the connections and the embedded server. A nil logger
	// discards.
	Log, PartLog, NATSLog *slog.Logger

	// Progress, if not nil, is called with each progress report of the
	// coordinator (coordinator.Config.Progress).
	Progress func(coordinator.Progress)

	// Listening, if not nil, is called once the embedded server listens
	// on nats.listen and the job is ready for its workers (Start), with
	// the URL workers on other machines connect to; keys says that it
	// admits registered workers by their keys, and then the job already
	// applies the registry's requests (c4book worker add).
	Listening func(url string, keys bool)

	// RegistryPoll is how often the job applies the registry requests
	// left in its book (book.RequestDir). The default value is
	// DefaultRegistryPoll.
	RegistryPoll time.Duration
}

// Process is the process of a running job. Make it with New, then Start,
// Run and Close.
type Process struct {
	opts    Options
	cfg     config.Config
	spec    coordinator.Spec
	log     *slog.Logger
	metrics *coordinator.Metrics
	// counters are the local worker's, if any.
	counters *worker.Counters

	book    *book.Book
	snap    book.Snapshotter
	server  *queue.Server // nil with nats.url
	conn    *queue.Conn   // the coordinator's
	workers sync.WaitGroup
	stopWkr context.CancelFunc
	wkrErr  error // the local worker's, read once it stopped

	keys         bool   // the embedded server knows workers by their keys: follow the registry
	registered   bool   // and some are registered already: their command line names a key
	stopRegistry func() // stops followRegistry, if it runs
}

// New checks the job that opts describes, and returns its process, not
// started: nats.url and nats.listen are not both set, an embedded server
// that listens has authentication (a token, a user, client certificates,
// or workers registered in the book), and the board and the job's spec
// are valid.
func New(opts Options) (*Process, error) {
	cfg := opts.Config
	if cfg.NATS.URL != "" && cfg.NATS.Listen != "" {
		return nil, fmt.Errorf("nats.url (%s) and nats.listen (%s) are both set: use an external server or listen with the embedded one, not both", cfg.NATS.URL, cfg.NATS.Listen)
	}
	if cfg.NATS.URL == "" && cfg.NATS.Listen != "" && !cfg.NATS.HasAuth() {
		// Registered workers are authentication too: the book says.
		if err := CheckListenAuth(cfg, bookHasWorkers(cfg.Book.Path)); err != nil {
			return nil, err
		}
	}
	board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
	if err != nil {
		return nil, fmt.Errorf("board.width, board.height: %w", err)
	}
	p := &Process{
		opts: opts, cfg: cfg,
		spec:    coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth, TaskSize: cfg.Queue.TaskSize},
		log:     orDiscard(opts.Log),
		metrics: coordinator.NewMetrics(),
	}
	p.opts.PartLog, p.opts.NATSLog = orDiscard(opts.PartLog), orDiscard(opts.NATSLog)
	if p.opts.RegistryPoll <= 0 {
		p.opts.RegistryPoll = DefaultRegistryPoll
	}
	if _, err := p.spec.Validate(); err != nil {
		return nil, err
	}
	if opts.Workers > 0 {
		p.counters = new(worker.Counters)
	}
	return p, nil
}

// orDiscard returns log, or a logger that discards if it is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// Spec returns the job's spec.
func (p *Process) Spec() coordinator.Spec { return p.spec }

// Start registers the job's metrics with reg (if not nil), opens (or
// creates) the book, starts the embedded server or connects to nats.url,
// starts the snapshots, the registry follower (an embedded server that
// knows workers by their keys) and the local worker. Close undoes what
// it did, also when it fails.
func (p *Process) Start(ctx context.Context, reg prometheus.Registerer) error {
	if reg != nil {
		reg.MustRegister(p.metrics.Collectors()...)
		if p.counters != nil {
			reg.MustRegister(p.counters.Collector(p.opts.Workers))
		}
	}
	if err := p.open(ctx, reg); err != nil {
		return err
	}
	p.snap.Start(ctx, p.book, p.cfg.Book.SnapshotInterval, p.log)
	if p.keys {
		// After the snapshots start: a change of the registry takes one.
		unmark, err := book.FollowRequests(p.cfg.Book.Path)
		if err != nil {
			return fmt.Errorf("worker registry: %w", err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		p.stopRegistry = func() { cancel(); <-done; unmark() }
		go func() {
			defer close(done)
			followRegistry(rctx, p.book, p.spec.ID(), p.server, &p.snap, p.opts.RegistryPoll, p.log.With("role", "registry"))
		}()
	}
	// Announced once the job also takes registry changes: a "c4book
	// worker add" run as soon as the address is printed goes to the job.
	if p.server != nil && p.opts.Listening != nil {
		if url := p.server.ClientURL(); url != "" {
			p.opts.Listening(url, p.registered)
		}
	}
	if p.opts.Workers > 0 {
		return p.startWorker(ctx)
	}
	return nil
}

// open opens (or creates) the book, then starts the embedded server or
// connects to nats.url.
func (p *Process) open(ctx context.Context, reg prometheus.Registerer) error {
	cfg := p.cfg
	bk, err := book.Open(cfg.Book.Path, &book.Options{Create: true, Board: p.spec.Board,
		CacheBytes: int64(cfg.Book.CacheSize), MemTableBytes: int64(cfg.Book.MemTableSize)})
	if err != nil {
		return err
	}
	p.book = bk
	if reg != nil {
		reg.MustRegister(bk.Collectors()...)
	}
	name := "c4book " + p.opts.Command
	if cfg.NATS.URL != "" {
		p.conn, err = Connect(ctx, cfg, name, p.opts.NATSLog.With("role", "nats"))
		return err
	}
	// The book is opened first: it then holds a Pebble database, and the
	// server's directory inside it is not mistaken for a stray file.
	var workers []queue.WorkerKey // nil: no keys
	if cfg.NATS.Listen != "" {
		ws, err := WorkerKeys(bk, p.spec.ID())
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
	p.server, err = startServer(cfg, workers, p.opts.NATSLog.With("role", "nats-server"))
	if err != nil {
		return err
	}
	p.keys = workers != nil
	p.registered = len(workers) > 0
	p.conn, err = p.server.ConnectInProcess(ctx, queue.Options{Name: name})
	if err != nil {
		return err
	}
	return nil
}

// Run runs the coordinator until the job is done, fails or ctx is done,
// calls stopped (if not nil), then stops the local worker (the tasks it is
// solving are handed back) and sets the job's last phase in its metrics.
// It returns the coordinator's summary and error. The caller stops
// showing progress in stopped, and quietens Options.NATSLog: what follows
// (the worker's connection closing) is no news.
func (p *Process) Run(ctx context.Context, stopped func()) (coordinator.Summary, error) {
	cfg := p.cfg
	sum, err := coordinator.Run(ctx, coordinator.Config{
		Spec: p.spec, Book: p.book, Queue: p.metrics.Queue(p.conn),
		Stream: queue.StreamConfig{AckWait: cfg.Queue.AckWait, MaxDeliver: cfg.Queue.MaxDeliver, Replicas: cfg.Queue.Replicas},
		Log:    p.log.With("role", "coordinator"),
		Progress: func(pr coordinator.Progress) {
			if p.opts.Progress != nil {
				p.opts.Progress(pr)
			}
			p.metrics.Progress(pr)
			p.snap.Phase(pr.Phase)
		},
		OnResult:          p.metrics.Result,
		OnQuarantine:      p.refuseQuarantined,
		CrossCheck:        crossCheck(cfg),
		QuarantineAfter:   cfg.Queue.QuarantineAfter,
		RefereeTableBytes: int64(cfg.Solver.TTSize),
		MinFreeBytes:      int64(cfg.Book.MinFree),
	})
	if stopped != nil {
		stopped()
	}
	p.stopWorker()
	switch {
	case ctx.Err() != nil:
		p.metrics.SetPhase(book.JobStopped)
	case err != nil:
		p.metrics.SetPhase(book.JobFailed)
	default:
		p.metrics.SetPhase(book.JobDone)
	}
	return sum, err
}

// WorkerErr returns the error that stopped the local worker, if any; call
// it after Run.
func (p *Process) WorkerErr() error { return p.wkrErr }

// LocalOnly reports whether the job of cfg can have no worker but its
// own: an embedded server that listens on no address.
func LocalOnly(cfg config.Config) bool { return cfg.NATS.URL == "" && cfg.NATS.Listen == "" }

// crossCheck returns the fraction of tasks the job of cfg cross-checks:
// queue.cross-check, but none when the job's own worker is its only one
// (there is nobody to check it against: every check would be skipped,
// after solving the task twice).
func crossCheck(cfg config.Config) float64 {
	if LocalOnly(cfg) {
		return 0
	}
	return cfg.Queue.CrossCheck
}

// refuseQuarantined has the embedded server refuse the key of a worker
// the job quarantined (coordinator.Config.OnQuarantine): its connections
// are closed, and it takes no more of the job's tasks.
func (p *Process) refuseQuarantined(worker string) {
	if !p.keys {
		return
	}
	keys, err := WorkerKeys(p.book, p.spec.ID())
	if err == nil {
		err = p.server.SetWorkers(keys)
	}
	if err != nil {
		p.log.Warn("refusing a quarantined worker's key: it may go on taking tasks", "worker", worker, "error", err)
		return
	}
	p.log.Warn("the quarantined worker's key is refused by the server until the job ends", "worker", worker)
}

// WorkerCount returns "N workers" for a progress line: the workers that
// reported recently, "" if the server does not say.
func (p *Process) WorkerCount() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ws, err := p.conn.Workers(ctx)
	if err != nil {
		return ""
	}
	if len(ws) == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", len(ws))
}

// startWorker starts the local worker with Options.Workers threads on a
// connection of its own. It waits for the coordinator to set the queue up.
func (p *Process) startWorker(ctx context.Context) error {
	var conn *queue.Conn
	var err error
	name := "c4book " + p.opts.Command + " worker"
	if p.server != nil {
		conn, err = p.server.ConnectInProcess(ctx, queue.Options{Name: name})
	} else {
		conn, err = Connect(ctx, p.cfg, name, p.opts.NATSLog.With("role", "worker-nats"))
	}
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	p.stopWkr = cancel
	p.workers.Add(1)
	go func() {
		defer p.workers.Done()
		defer conn.Close()
		tasks, err := WaitForTasks(wctx, conn, nil)
		if err != nil {
			if wctx.Err() == nil {
				p.wkrErr = err
			}
			return
		}
		// The worker's own messages (a task handed back, ...) are for
		// debugging: PartLog shows its warnings and errors.
		p.wkrErr = worker.Run(wctx, tasks, conn, worker.Config{
			Concurrency: p.opts.Workers,
			TableBytes:  int64(p.cfg.Worker.TTSize),
			Log:         p.opts.PartLog.With("role", "worker"),
			Counters:    p.counters,
		})
	}()
	return nil
}

// stopWorker stops the local worker, if any, and waits for it: tasks it is
// solving are handed back.
func (p *Process) stopWorker() {
	if p.stopWkr != nil {
		p.stopWkr()
		p.workers.Wait()
		p.stopWkr = nil
	}
}

// Close stops everything Start started, the book last, and returns the
// error of closing the book. Stop serving the metrics registered by Start
// first: the book's read the book.
func (p *Process) Close() error {
	p.stopWorker()
	if p.stopRegistry != nil {
		p.stopRegistry()
	}
	if p.conn != nil {
		p.conn.Close()
	}
	if p.server != nil {
		p.server.Shutdown()
	}
	p.snap.Stop()
	if p.book != nil {
		if err := p.book.Close(); err != nil {
			return fmt.Errorf("closing the book: %w", err)
		}
	}
	return nil
}
