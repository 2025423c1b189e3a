// Package worker solves the tasks of generation jobs: it pulls one task at
// a time per thread, solves its positions with a transposition table that
// stays warm from task to task, keeps the task alive while it works, and
// publishes the exact scores.
package worker

import (
	"context"
	"errors"
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
	// Heartbeat is how often a task being solved is reported in progress;
	// it must be well below the queue's AckWait, and is lowered to a third
	// of it when the tasks tell their AckWait (queue.TaskSource does). The
	// default value is 10 seconds.
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
}

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
}

// Run works until ctx is done (or the worker is idle for cfg.IdleExit). On
// cancellation a task being solved is handed back to the queue at once, so
// another worker takes it; Run returns nil. A task source that fails is
// waited for (see taskBackoff), unless its connection is closed, which
// stops the worker with an error wrapping queue.ErrClosed.
func Run(ctx context.Context, tasks Tasks, pub Publisher, cfg Config) error {
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if err := queue.ValidWorkerID(cfg.ID); err != nil {
		return fmt.Errorf("worker id %q: %w", cfg.ID, err)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = runtime.NumCPU()
	}
	if cfg.TableBytes == 0 {
		cfg.TableBytes = solver.DefaultTableBytes
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 10 * time.Second
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
	w := &worker{cfg: cfg, Counters: cfg.Counters, tasks: tasks, pub: pub, log: cfg.Log.With("worker", cfg.ID), started: time.Now(), poke: make(chan struct{}, 1)}
	host, _ := os.Hostname()
	w.host = host

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
	w.log.Info("worker stopped", "tasks", w.Tasks.Load(), "positions", w.Solved.Load(), "nodes", w.Nodes.Load())
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
	lastJob   atomic.Value  // string
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

// loop takes and solves tasks until ctx is done or the worker is idle. It
// asks for its next task as soon as it starts on one (fetch), so that the
// next is at hand when this one is solved, and hands each task solved to
// a delivery of its own (deliver), which publishes the result and acks
// the task while the thread goes on: the thread's round trips to the
// server overlap its solving.
func (w *worker) loop(ctx context.Context, th *thread) {
	index := th.index
	ahead := w.fetch(ctx)
	for {
		t := w.awaitOrHelp(ctx, th, ahead)
		ahead = nil
		msg, err := t.msg, t.err
		switch {
		case ctx.Err() != nil:
			if err == nil && msg != nil {
				// Taken as the worker was being stopped: handed back at
				// once, not left to wait out its AckWait.
				w.log.Info("interrupted: task handed back", "task", msg.Task.TaskID, "job", msg.Task.JobID)
				t.stop()
				w.HandedBack.Add(1)
				if err := msg.Nak(queue.MinNakDelay); err != nil {
					w.log.Debug("handing a task back", "error", err)
				}
			}
			return
		case errors.Is(err, errIdle):
			w.log.Info("no task came: leaving", "thread", index, "idle", w.cfg.IdleExit)
			return
		case errors.Is(err, queue.ErrClosed):
			// Closed under the worker (nats.go gives up on a server
			// that refuses the credentials again): nothing will come.
			w.fail(err)
			return
		case err != nil:
			// next waits out every other failure.
			var bad *queue.DecodeError
			if errors.As(err, &bad) {
				w.log.Warn("malformed task dropped", "subject", bad.Subject, "sender", bad.Sender, "error", bad.Err)
			} else {
				w.log.Warn("taking a task", "error", err)
			}
			ahead = w.fetch(ctx)
			continue
		}
		ahead = w.fetch(ctx)
		w.handle(ctx, th, msg, t.stop)
	}
}

// taken is a task taken from the queue, kept alive (InProgress) until
// stop is called, or the error of the attempt.
type taken struct {
	msg  *queue.TaskMsg
	stop func()
	err  error
}

// fetch starts taking the next task: the channel delivers it, kept alive
// from the moment it comes, or next's error.
func (w *worker) fetch(ctx context.Context) <-chan taken {
	ch := make(chan taken, 1)
	go func() {
		msg, err := w.next(ctx)
		if err != nil {
			ch <- taken{err: err}
			return
		}
		ch <- taken{msg: msg, stop: w.keep(ctx, msg)}
	}()
	return ch
}

// keep reports progress on msg (InProgress) every heartbeat until the
// returned stop is called, so that the server does not deliver the task
// again while it waits for its thread or is being solved or delivered.
func (w *worker) keep(ctx context.Context, msg *queue.TaskMsg) (stop func()) {
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.heartbeat())
		defer tick.Stop()
		for {
			select {
			case <-kctx.Done():
				return
			case <-tick.C:
				if err := msg.InProgress(); err != nil {
					warnUnlessStopped(ctx, w.log.With("task", msg.Task.TaskID, "job", msg.Task.JobID), "reporting progress", err)
				}
				tick.Reset(w.heartbeat())
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// awaitOrHelp waits for the task ahead, helping the other threads with
// the tasks in their hands meanwhile (solver.Solver.Help): at the end of
// a job, threads with no task left work on the last hard positions with
// those that have one, instead of waiting. A task that comes ends the
// help at once.
func (w *worker) awaitOrHelp(ctx context.Context, th *thread, ahead <-chan taken) taken {
	select {
	case t := <-ahead:
		return t // at hand
	default:
	}
	if len(w.threads) == 1 {
		return <-ahead
	}
	helpCtx, stopHelping := context.WithCancel(ctx)
	defer stopHelping()
	got := make(chan taken, 1)
	go func() {
		t := <-ahead
		got <- t
		stopHelping()
	}()
	w.help(helpCtx, th)
	return <-got
}

// help makes th help the busy threads, one after another, until ctx is
// done.
func (w *worker) help(ctx context.Context, th *thread) {
	var last *solver.Solver // the solver helped last, until a thread takes a task
	for ctx.Err() == nil {
		w.mu.Lock()
		wake := w.wake
		w.mu.Unlock()
		var leader *solver.Solver
		for _, other := range w.threads {
			if s := other.busy.Load(); other != th && s != nil && s != last {
				leader = s
				break
			}
		}
		if leader == nil {
			select {
			case <-wake:
				last = nil
			case <-ctx.Done():
			}
			continue
		}
		if th.solver == nil || th.solver.Table() != leader.Table() {
			th.solver = solver.NewShared(leader.Table())
		}
		// Until ctx is done or the leader's task ends.
		_ = leader.Help(ctx, th.solver) // same table: no error
		last = leader
	}
}

// wakeHelpers tells the threads waiting to help that a thread took a task.
func (w *worker) wakeHelpers() {
	w.mu.Lock()
	close(w.wake)
	w.wake = make(chan struct{})
	w.mu.Unlock()
}

// errIdle: no task came within IdleExit.
var errIdle = errors.New("idle")

// taskBackoff paces a thread's attempts to take a task while the task
// source fails: the consumer is gone (a server started again without its
// store, before a coordinator sets the queue up again), or any other
// failure but a malformed task, which the source has dropped already, and
// a closed connection, which will not come back. A lost connection does
// not fail Next: the source waits it out, and the connection says itself
// that it is lost.
var taskBackoff = queue.Backoff{
	Max:   5 * time.Second,
	Level: slog.LevelWarn,
	Passing: func(err error) bool {
		var bad *queue.DecodeError
		return !errors.As(err, &bad) && !errors.Is(err, queue.ErrClosed)
	},
}

// fail records err, the first failure that stops the worker, for Run to
// return.
func (w *worker) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// next returns the next task, errIdle after IdleExit without one. It
// waits out the failures of the task source (taskBackoff), saying so to
// the log once a minute.
func (w *worker) next(ctx context.Context) (*queue.TaskMsg, error) {
	idleCtx, cancel := ctx, context.CancelFunc(func() {})
	if w.cfg.IdleExit > 0 {
		idleCtx, cancel = context.WithTimeout(ctx, w.cfg.IdleExit)
	}
	defer cancel()
	var msg *queue.TaskMsg
	err := taskBackoff.Retry(idleCtx, w.log, "the task queue", func() error {
		var err error
		msg, err = w.tasks.Next(idleCtx)
		return err
	})
	if err != nil && ctx.Err() == nil && idleCtx.Err() != nil {
		return nil, errIdle
	}
	return msg, err
}

// handle solves one task, kept alive until stop, and hands it to deliver.
// A task that cannot be solved (malformed) is terminated; one interrupted
// by ctx, or whose solving failed, is handed back.
func (w *worker) handle(ctx context.Context, th *thread, msg *queue.TaskMsg, stop func()) {
	t := &msg.Task
	log := w.log.With("task", t.TaskID, "job", t.JobID)
	positions, err := decodeTask(t)
	if err != nil {
		stop()
		log.Warn("malformed task terminated", "error", err)
		if err := msg.Term(); err != nil {
			log.Warn("terminating a task", "error", err)
		}
		return
	}
	log.Debug("task taken", "positions", len(positions), "delivered", msg.Delivered)
	w.Busy.Add(1)
	w.lastJob.Store(t.JobID)
	w.took.Store(true)
	if w.shownIdle.Load() {
		w.pokeStatus() // the status says idle: corrected now, not at the next tick
	}
	res, err := w.solve(ctx, th, t, positions)
	w.Busy.Add(-1)
	if err != nil {
		stop()
		if ctx.Err() != nil {
			log.Info("interrupted: task handed back")
		} else {
			log.Error("solving failed: task handed back", "error", err, "delivered", msg.Delivered)
		}
		w.HandedBack.Add(1)
		if err := msg.Nak(queue.MinNakDelay); err != nil {
			log.Warn("handing a task back", "error", err)
		}
		return
	}
	res.WorkerID = w.cfg.ID
	th.delivering <- struct{}{} // at most deliveriesPerThread in flight
	w.deliveries.Add(1)
	go func() {
		defer w.deliveries.Done()
		defer func() { <-th.delivering }()
		w.deliver(ctx, msg, res, stop, log, len(positions))
	}()
}

// deliveriesPerThread is the most tasks of one thread being delivered
// (published and acked) at once; a thread with as many waits before it
// hands over the next, so that a slow server slows the solving down
// rather than piling results up.
const deliveriesPerThread = 2

// deliverGrace is how long the delivery of a task solved goes on once the
// worker is stopped: the result is worth publishing, but a server that
// does not answer must not hold the worker's exit. A variable for tests.
var deliverGrace = 5 * time.Second

// deliver publishes res, the result of msg, then acks msg, and counts the
// task done; stop ends the progress reports on msg. A result it cannot
// publish hands the task back.
func (w *worker) deliver(ctx context.Context, msg *queue.TaskMsg, res queue.Result, stop func(), log *slog.Logger, positions int) {
	defer stop()
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	after := context.AfterFunc(ctx, func() { time.AfterFunc(deliverGrace, cancel) })
	defer after()
	if err := w.pub.PublishResult(dctx, res); err != nil {
		warnUnlessStopped(ctx, log, "publishing a result: task handed back", err)
		w.HandedBack.Add(1)
		_ = msg.Nak(queue.MinNakDelay)
		return
	}
	if err := msg.Ack(dctx); err != nil {
		// The result is out: a second delivery of the task makes a
		// duplicate result, which the coordinator ignores.
		warnUnlessStopped(ctx, log, "acking a task", err)
	}
	w.Solved.Add(uint64(positions))
	w.Nodes.Add(res.Nodes)
	w.Tasks.Add(1)
	if w.shownNone.Load() {
		// The status says 0 solved while the job counts this result:
		// corrected now, not up to StatusEvery later.
		w.pokeStatus()
	}
}

// pokeStatus has reportStatus store the worker's status now.
func (w *worker) pokeStatus() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// warnUnlessStopped logs err, a failure to talk to the queue, as a
// warning; or, when ctx is done, at debug level: the worker is being
// stopped (Ctrl-C), which cut the exchange short, and that is no news.
func warnUnlessStopped(ctx context.Context, log *slog.Logger, msg string, err error) {
	level := slog.LevelWarn
	if ctx.Err() != nil {
		level = slog.LevelDebug
	}
	log.Log(context.WithoutCancel(ctx), level, msg, "error", err)
}

// solve solves the positions of t in order with th's solver, made anew
// when the board changes. A panic of the solver is returned as an error.
func (w *worker) solve(ctx context.Context, th *thread, t *queue.Task, positions []solver.Position) (res queue.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			th.solver = nil
			err = fmt.Errorf("solver panic: %v", r)
		}
	}()
	b := positions[0].Board()
	if th.solver == nil || th.solver.Board() != b {
		th.solver = nil
		t, err := w.sharedTable(b)
		if err != nil {
			return res, err
		}
		th.solver = solver.NewShared(t)
	}
	s := th.solver
	// Threads with no task of their own may help with this one.
	s.OpenTeam()
	th.busy.Store(s)
	w.wakeHelpers()
	defer func() {
		th.busy.Store(nil)
		s.CloseTeam()
	}()
	start := time.Now()
	s.ResetNodes()
	res = queue.Result{JobID: t.JobID, TaskID: t.TaskID, Keys: t.Keys, Scores: make([]int8, len(positions))}
	guess := 0
	for i, p := range positions {
		// Neighbouring positions often have the same outcome: the first
		// question asked of a position is whether it scores at least the
		// outcome of the one before (1: does it win? 0: does it at least
		// draw? -1: is it at worst lost to the very last stone?). Guessing
		// the score itself costs more when wrong than it saves when right
		// (docs/solver.md, measurements behind the constants).
		if beforeSolve != nil {
			beforeSolve(p)
		}
		// A value comes only from a search that finished and was
		// confirmed (solver.Solver.runSolve); any error, a stop among
		// them, hands the whole task back: no score of it is published.
		v, err := s.SolveNearContext(ctx, p, guess)
		if err != nil {
			return res, err
		}
		res.Scores[i] = int8(v)
		guess = solver.Outcome(v)
	}
	res.Nodes = s.Nodes()
	res.Elapsed = time.Since(start)
	return res, nil
}

// heartbeat returns how often to report progress on a task now: three
// times in the AckWait the coordinator chose, when the task source tells
// it (queue.TaskSource does, and follows its changes), and at most
// Config.Heartbeat.
func (w *worker) heartbeat() time.Duration {
	if aw, ok := w.tasks.(interface{ AckWait() time.Duration }); ok && aw.AckWait() > 0 {
		return min(w.cfg.Heartbeat, aw.AckWait()/3)
	}
	return w.cfg.Heartbeat
}

// sharedTable returns the worker's table for board b, made anew (and the
// old one left to the threads still on it) when the board changes.
func (w *worker) sharedTable(b *solver.Board) (*solver.Table, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.table != nil && w.table.Board() == b {
		return w.table, nil
	}
	w.table = nil
	t, err := solver.NewTable(b, w.cfg.TableBytes)
	if err != nil {
		return nil, err
	}
	w.table = t
	return t, nil
}

// beforeSolve, if set, is called before each position is solved: a seam
// for tests to make the solver fail. Nil outside tests.
var beforeSolve func(p solver.Position)

// boards caches boards by size, so that tasks of one size share one
// *solver.Board and a thread keeps its solver across them.
var boards sync.Map // [2]uint8 -> *solver.Board

// decodeTask returns the positions of t, or an error naming what makes the
// task impossible to solve: a board that does not exist, a key that is not
// a position of it, a position whose game is over.
func decodeTask(t *queue.Task) ([]solver.Position, error) {
	size := [2]uint8{t.Width, t.Height}
	bv, ok := boards.Load(size)
	if !ok {
		b, err := solver.NewBoard(int(t.Width), int(t.Height))
		if err != nil {
			return nil, err
		}
		bv, _ = boards.LoadOrStore(size, b)
	}
	b := bv.(*solver.Board)
	if len(t.Keys) == 0 {
		return nil, errors.New("no positions")
	}
	positions := make([]solver.Position, len(t.Keys))
	for i, k := range t.Keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", i, err)
		}
		if p.Moves() > 0 && p.LastMoveWon() {
			return nil, fmt.Errorf("position %d: the game is over", i)
		}
		positions[i] = p
	}
	return positions, nil
}

// reportStatus stores the worker's status every StatusEvery until
// statusCtx is done; work is the worker's context.
//
// Busy says whether the worker worked in the interval, not only at the
// instant of the report: a worker on tasks of a few milliseconds spends
// most instants between two of them (waiting for the next one from the
// server), and sampled alone it would look idle while it solves all the
// time. A worker shown idle that takes a task, or shown with no task done
// that finishes one, reports at once, rather than up to StatusEvery later.
func (w *worker) reportStatus(statusCtx, work context.Context) {
	tick := time.NewTicker(w.cfg.StatusEvery)
	defer tick.Stop()
	for {
		job, _ := w.lastJob.Load().(string)
		took := w.took.Swap(false)
		s := queue.WorkerStatus{
			WorkerID: w.cfg.ID, Host: w.host, Solved: w.Solved.Load(), Nodes: w.Nodes.Load(),
			Tasks: w.Tasks.Load(), Started: w.started, Busy: took || w.Busy.Load() > 0, JobID: job,
		}
		w.shownIdle.Store(!s.Busy)
		w.shownNone.Store(s.Tasks == 0)
		if err := w.pub.PutWorkerStatus(statusCtx, s); err != nil && work.Err() == nil {
			w.log.Debug("storing worker status", "error", err)
		}
		select {
		case <-statusCtx.Done():
			return
		case <-tick.C:
		case <-w.poke:
		}
	}
}
