package coordinator_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// solvingWorker is a worker written for a test: it solves every task with
// a real solver, except that it calls before(task) first, which may hold
// it up or make it hand the task back (returning false), and after(task),
// if not nil, once it has published the task's result and acked it.
func (c *cluster) solvingWorker(tb testing.TB, ctx context.Context, id string, before func(m *queue.TaskMsg) bool, after func(m *queue.TaskMsg)) (wait func()) {
	s, _ := solver.New(c.board, 1<<20)
	return c.goWorker(tb, ctx, "test worker "+id, func(conn *queue.Conn, tasks *queue.TaskSource) {
		for {
			m, err := tasks.Next(ctx)
			if err != nil {
				return
			}
			if !before(m) {
				_ = m.Nak(queue.MinNakDelay)
				continue
			}
			t := &m.Task
			res := queue.Result{JobID: t.JobID, TaskID: t.TaskID, WorkerID: id, Keys: t.Keys}
			for _, k := range t.Keys {
				p, _ := c.board.PositionFromKey(k)
				res.Scores = append(res.Scores, int8(s.Solve(p)))
			}
			if err := conn.PublishResult(ctx, res); err != nil {
				return
			}
			_ = m.Ack(ctx)
			if after != nil {
				after(m)
			}
		}
	})
}

// TestRun_workerDies: a worker takes a task and dies without a word; the
// task is delivered again after AckWait and the job completes.
func TestRun_workerDies(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	c.stream.AckWait = 2 * time.Second
	if err := c.conn.EnsureStreams(context.Background(), c.stream); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}

	// The doomed worker takes the first task published, then its
	// connection goes: no ack, no nak, no more progress reports.
	doomed, err := c.server.Connect("doomed worker")
	if err != nil {
		t.Fatal(err)
	}
	taken := make(chan queue.Task, 1)
	go func() {
		tasks, err := doomed.Tasks(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		msg, err := tasks.Next(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		doomed.Close()
		taken <- msg.Task
	}()
	type outcome struct {
		sum coordinator.Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := c.runJob(ctx, t, spec)
		done <- outcome{sum, err}
	}()
	lost := <-taken
	wait := c.startWorker(t, ctx, "survivor")
	out := <-done
	cancel()
	wait()
	if out.err != nil {
		t.Fatal(out.err)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
	for _, k := range lost.Keys {
		p, _ := b.PositionFromKey(k)
		if _, ok, _ := c.book.Get(p); !ok {
			t.Fatalf("a position of the dead worker's task is missing:\n%v", p)
		}
	}
	if out.sum.ByWorker["survivor"] != out.sum.Solved {
		t.Errorf("solved %d, by the survivor %d", out.sum.Solved, out.sum.ByWorker["survivor"])
	}
}

// TestRun_pausedWorker: a worker stops (as under SIGSTOP) longer than
// AckWait while holding a task; the task goes to another worker, and the
// paused one's late result, when it wakes, is a harmless duplicate: taken
// as a copy of a task done, nothing of it stored. One task is out at a
// time (Window 1), so the job waits for the paused worker's task until the
// other worker has it; the paused worker wakes once the other has answered
// it, and the other goes on once the coordinator has checked the late
// result, so that the late result comes while the job runs.
func TestRun_pausedWorker(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	c.stream.AckWait = time.Second
	if err := c.conn.EnsureStreams(context.Background(), c.stream); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	var held []uint64             // the keys of the task the sleepy worker holds
	paused := make(chan struct{}) // held is set
	redone := make(chan struct{}) // the awake worker answered the held task
	lateIn := make(chan struct{}) // the coordinator checked the sleepy worker's late result
	var onceIn, onceRedone sync.Once
	var woken bool
	sleepyCtx, stopSleepy := context.WithCancel(ctx)
	waitSleepy := c.solvingWorker(t, sleepyCtx, "sleepy", func(m *queue.TaskMsg) bool {
		held = m.Task.Keys
		close(paused)
		select { // no progress reported meanwhile
		case <-redone:
		case <-ctx.Done():
		}
		woken = true
		return true
	}, func(*queue.TaskMsg) {
		stopSleepy() // its late result is out: it takes no other task
	})
	done := make(chan error, 1)
	var sum coordinator.Summary
	go func() {
		var err error
		sum, err = coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), Window: 1,
			OnResult: func(worker string, ok bool) {
				if worker == "sleepy" {
					onceIn.Do(func() { close(lateIn) })
				}
			}})
		done <- err
	}()
	select {
	case <-paused:
	case err := <-done:
		t.Fatalf("the job ended before a worker took a task: %v", err)
	}
	waitAwake := c.solvingWorker(t, ctx, "awake", func(*queue.TaskMsg) bool { return true }, func(m *queue.TaskMsg) {
		if slices.Equal(m.Task.Keys, held) {
			onceRedone.Do(func() { close(redone) }) // (a copy published as overdue may come too)
			select {
			case <-lateIn:
			case <-ctx.Done():
			}
		}
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	waitSleepy()
	waitAwake()
	if !woken {
		t.Fatal("the sleepy worker never woke")
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
	if s := sum.Workers["sleepy"]; sum.Rejected != 0 || s.Accepted != 1 || s.Rejected != 0 || sum.ByWorker["sleepy"] != 0 || sum.ByWorker["awake"] != sum.Solved {
		t.Errorf("%d results rejected, the sleepy worker's results %+v, positions by worker %v; want its late result taken as a duplicate, nothing stored of it, every position the awake worker's",
			sum.Rejected, s, sum.ByWorker)
	}
}

// TestRun_failingTask: a task that no worker can solve (here, every worker
// hands it back, as after a crash) is given up on after MaxDeliver
// deliveries and reported with its positions; the rest of the job is
// stored, and running the job again, with a worker that can, completes it.
func TestRun_failingTask(t *testing.T) {
	t.Parallel()
	t.Run("notice heard", func(t *testing.T) { testFailingTask(t, false) })
	// The notice of a task given up on is a plain NATS message, sent once:
	// missed, the coordinator finds the task stranded in the stream.
	t.Run("notice lost", func(t *testing.T) { testFailingTask(t, true) })
}

// deafQueue is a queue whose notices of tasks given up on never arrive.
type deafQueue struct{ coordinator.Queue }

func (deafQueue) WatchMaxDeliveries(context.Context, func(uint64)) error { return nil }

func testFailingTask(t *testing.T, deaf bool) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	c.stream.MaxDeliver = 2
	c.stream.AckWait = time.Second
	if err := c.conn.EnsureStreams(context.Background(), c.stream); err != nil {
		t.Fatal(err)
	}
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	leaves, tasks := coordinator.PlanTasks(t, spec, newScratchBook(t, b))
	poison := tasks[3]
	ctx, cancel := context.WithCancel(context.Background())
	wait := c.solvingWorker(t, ctx, "crashy", func(m *queue.TaskMsg) bool {
		return !slices.Equal(m.Task.Keys, poison)
	}, nil)
	cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), IdleCheck: time.Second}
	if deaf {
		cfg.Queue = deafQueue{c.conn}
	}
	sum, err := coordinator.Run(ctx, cfg)
	cancel()
	wait()
	if !errors.Is(err, coordinator.ErrTasksFailed) {
		t.Fatalf("Run = %v, want ErrTasksFailed", err)
	}
	if len(sum.Failed) != 1 || sum.Failed[0].Index != 3 || len(sum.Failed[0].Moves) != len(poison) {
		t.Fatalf("failed tasks %+v, want task 3 with its %d positions", sum.Failed, len(poison))
	}
	if want := int64(len(leaves) - len(poison)); sum.Solved != want {
		t.Errorf("solved %d positions, want all but the failed task's: %d", sum.Solved, want)
	}
	// Again, with a worker that solves everything.
	ctx, cancel = context.WithCancel(context.Background())
	wait = c.startWorker(t, ctx, "healthy")
	again, err := c.runJob(ctx, t, spec)
	cancel()
	wait()
	if err != nil {
		t.Fatal(err)
	}
	if again.Solved != int64(len(poison)) {
		t.Errorf("second run solved %d positions, want the failed task's %d", again.Solved, len(poison))
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}
