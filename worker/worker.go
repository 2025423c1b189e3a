// Package worker solves the tasks of generation jobs: it pulls one task at
// a time per thread, solves its positions with a transposition table that
// stays warm from task to task, keeps the task alive while it works, and
// publishes the exact scores.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Tasks is where a worker takes its tasks: a queue.TaskSource, safe for
// concurrent use.
type Tasks interface {
	Next(ctx context.Context) (*queue.TaskMsg, error)
}

// Publisher is where a worker sends its results and its status.
type Publisher interface {
	PublishResult(ctx context.Context, r queue.Result) error
	PutWorkerStatus(ctx context.Context, s queue.WorkerStatus) error
	RemoveWorkerStatus(ctx context.Context, workerID string) error
}

// The task source and the publisher the commands give a worker.
var (
	_ Tasks     = (*queue.TaskSource)(nil)
	_ Publisher = (*queue.Conn)(nil)
)

// Config is how a worker works.
type Config struct {
	// ID names the worker in results, logs and status. The default value
	// is "<host>-<pid>".
	ID string
	// Concurrency is the number of tasks solved at once, one solver and
	// one table each. The default value is the number of CPUs.
	Concurrency int
	// TableBytes is the size of the worker's transposition table, which
	// its threads share: what one finds, the others use. The default value
	// is solver.DefaultTableBytes.
	TableBytes int64
	// Heartbeat is how often a task being solved is reported in progress
	// at most: it is lowered to a third of the tasks' AckWait when the
	// tasks tell it (queue.TaskSource does, and follows the coordinator's
	// changes), so that callers need not know it. The default value is
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// IdleExit, if positive, makes the worker exit once no task came for
	// that long. The default value (0) waits for tasks forever.
	IdleExit time.Duration
	// StatusEvery is how often the worker's status is stored. The default
	// value is DefaultStatusEvery.
	StatusEvery time.Duration
	// Log receives what happens. The default value (nil) discards it.
	Log *slog.Logger
	// Counters, if not nil, receives the worker's running totals, for a
	// caller to read while it works (metrics). The default value (nil)
	// keeps them inside the worker.
	Counters *Counters

	keep *tableKeeper // RunGated's: the table kept across pauses
}

// withDefaults returns cfg with the defaults of its fields filled in.
func (cfg Config) withDefaults() Config {
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = runtime.NumCPU()
	}
	if cfg.TableBytes == 0 {
		cfg.TableBytes = solver.DefaultTableBytes
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = DefaultStatusEvery
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Counters == nil {
		cfg.Counters = new(Counters)
	}
	return cfg
}

// DefaultHeartbeat is the default Config.Heartbeat: the longest time
// between two reports of a task in progress.
const DefaultHeartbeat = 10 * time.Second

// DefaultStatusEvery is the default Config.StatusEvery: well within
// queue.WorkerStatusTTL, so that a worker whose report or two was lost is
// still listed. c4book status says it (statusLong).
const DefaultStatusEvery = 15 * time.Second

// Counters are the running totals of a worker: the figures of its status
// reports, and the tasks it handed back. Every field is safe to read at
// any time; only the worker writes them.
type Counters struct {
	Tasks      atomic.Uint64 // tasks solved and their results published
	Solved     atomic.Uint64 // positions of those tasks
	Nodes      atomic.Uint64 // nodes searched for those tasks
	HandedBack atomic.Uint64 // tasks handed back unsolved: interrupted, a solver failure, a result not published
	Busy       atomic.Int64  // threads working on a task now
	Job        atomic.Value  // string: the job of the last task taken

	// Where the threads waited instead of solving, in nanoseconds summed
	// over threads: for a task to come (the round trips of taking one,
	// and a queue with none), and for a delivery to finish before
	// handing over the next (deliveriesPerThread in flight). On a slow
	// link they say what the link costs.
	TaskWait     atomic.Int64
	DeliveryWait atomic.Int64
}

// LastJob returns the job of the last task taken, "" before the first.
func (c *Counters) LastJob() string {
	job, _ := c.Job.Load().(string)
	return job
}

// Run works until ctx is done (or the worker is idle for cfg.IdleExit). On
// cancellation a task being solved is handed back to the queue at once, so
// another worker takes it; Run returns nil. A task source that fails is
// waited for (see taskBackoff), unless its connection is closed, which
// stops the worker with an error wrapping queue.ErrClosed.
func Run(ctx context.Context, tasks Tasks, pub Publisher, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := queue.ValidWorkerID(cfg.ID); err != nil {
		return fmt.Errorf("worker id %q: %w", cfg.ID, err)
	}
	w := &worker{cfg: cfg, Counters: cfg.Counters, tasks: tasks, pub: pub, log: cfg.Log.With("worker", cfg.ID), started: time.Now(), poke: make(chan struct{}, 1)}
	w.host, _ = os.Hostname()
	if cfg.keep != nil {
		w.table = cfg.keep.table // warm from the run before a pause
		defer func() { cfg.keep.table = w.table }()
	}

	statusCtx, stopStatus := context.WithCancel(context.WithoutCancel(ctx))
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		w.reportStatus(statusCtx, ctx)
	}()

	w.threads = make([]*thread, cfg.Concurrency)
	for i := range w.threads {
		w.threads[i] = &thread{index: i, delivering: make(chan struct{}, deliveriesPerThread)}
	}
	w.wake = make(chan struct{})
	var wg sync.WaitGroup
	for _, th := range w.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, th)
		}()
	}
	wg.Wait()
	w.deliveries.Wait()
	stopStatus()
	<-statusDone
	// Leaving: the status goes at once rather than after its time to live.
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := pub.RemoveWorkerStatus(rmCtx, cfg.ID); err != nil {
		w.log.Debug("removing worker status", "error", err)
	}
	w.log.Info("worker stopped", "tasks", w.Tasks.Load(), "positions", w.Solved.Load(), "nodes", w.Nodes.Load(),
		"waited_for_tasks", time.Duration(w.TaskWait.Load()).Round(time.Millisecond),
		"waited_for_deliveries", time.Duration(w.DeliveryWait.Load()).Round(time.Millisecond))
	if w.err != nil {
		return fmt.Errorf("worker %s: %w", cfg.ID, w.err)
	}
	return nil
}

// worker is the state shared by the threads of a worker.
type worker struct {
	cfg     Config
	tasks   Tasks
	pub     Publisher
	log     *slog.Logger
	host    string
	started time.Time

	threads []*thread

	mu    sync.Mutex
	table *solver.Table // shared by the threads, for the board of the latest task
	wake  chan struct{} // closed, and made anew, when a thread takes a task
	err   error         // what stopped the worker, if not ctx or idleness

	deliveries sync.WaitGroup // tasks solved being published and acked

	*Counters
	took      atomic.Bool   // a thread took a task since the last status
	shownIdle atomic.Bool   // the last status stored said not busy
	shownNone atomic.Bool   // the last status stored counted no task done
	poke      chan struct{} // asks reportStatus for a status now
}

// thread is one solving thread: its solver, on the worker's shared table,
// kept across tasks of the same board so the table stays warm.
type thread struct {
	index  int
	solver *solver.Solver // used by the thread's goroutine only

	// busy is the solver of the task in the thread's hands, open to
	// helpers, or nil.
	busy atomic.Pointer[solver.Solver]

	// delivering holds a token for each of the thread's tasks being
	// delivered (deliveriesPerThread at most).
	delivering chan struct{}
}
