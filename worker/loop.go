package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// loop takes and solves tasks until ctx is done or the worker is idle. It
// asks for its next task as soon as it starts on one (fetch), so that the
// next is at hand when this one is solved, when taking one costs it more
// than a tenth of a task's solving (pace); otherwise once it has solved
// this one, so that it holds no task it is not at. It hands each task
// solved to a delivery of its own (deliver), which publishes the result
// and acks the task while the thread goes on: the thread's round trips to
// the server overlap its solving.
func (w *worker) loop(ctx context.Context, th *thread) {
	index := th.index
	var p pace
	ahead := w.fetch(ctx)
	for {
		waitFrom := time.Now()
		t := w.awaitOrHelp(ctx, th, ahead)
		w.TaskWait.Add(int64(time.Since(waitFrom)))
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
		p.fetched(t.took)
		if p.fetchAhead() {
			ahead = w.fetch(ctx)
		}
		start := time.Now()
		w.handle(ctx, th, msg, t.stop)
		p.solved(time.Since(start))
		if ahead == nil {
			ahead = w.fetch(ctx)
		}
	}
}

// taken is a task taken from the queue, kept alive (InProgress) until
// stop is called, or the error of the attempt; took is how long taking it
// took.
type taken struct {
	msg  *queue.TaskMsg
	stop func()
	err  error
	took time.Duration
}

// fetch starts taking the next task: the channel delivers it, kept alive
// from the moment it comes, or next's error.
func (w *worker) fetch(ctx context.Context) <-chan taken {
	ch := make(chan taken, 1)
	go func() {
		start := time.Now()
		msg, err := w.next(ctx)
		if err != nil {
			ch <- taken{err: err}
			return
		}
		ch <- taken{msg: msg, stop: w.keep(ctx, msg), took: time.Since(start)}
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
	w.Job.Store(t.JobID)
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
	waitFrom := time.Now()
	th.delivering <- struct{}{} // at most deliveriesPerThread in flight
	w.DeliveryWait.Add(int64(time.Since(waitFrom)))
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
