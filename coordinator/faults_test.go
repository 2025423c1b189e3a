package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/internal/testaddr"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
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

// TestRun_serverRestart: the NATS server stops in the middle of a job and
// starts again on the same store and address; the coordinator and the
// workers, connected over TCP, reconnect and the job completes.
func TestRun_serverRestart(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	dir := t.TempDir()
	addr := testaddr.Free(t)
	opts := queue.ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: addr, Token: "secret"}
	srv, err := queue.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	defer func() { mu.Lock(); srv.Shutdown(); mu.Unlock() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connect := func(name string) *queue.Conn {
		conn, err := queue.Connect(ctx, queue.Options{URL: "nats://" + addr, Token: "secret", Name: name, ReconnectWait: 100 * time.Millisecond, Logger: logger(t).With("conn", name)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	coordConn := connect("coordinator")
	stream := queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 5}
	if err := coordConn.EnsureStreams(ctx, stream); err != nil {
		t.Fatal(err)
	}
	bk, err := book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	var wg sync.WaitGroup
	for _, id := range []string{"w1", "w2"} {
		conn := connect(id)
		tasks, err := conn.Tasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = worker.Run(ctx, tasks, conn, worker.Config{ID: id, Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)})
		}()
	}
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 8}
	restarted := make(chan struct{})
	var once sync.Once
	cfg := coordinator.Config{Spec: spec, Book: bk, Queue: coordConn, Stream: stream, Log: logger(t),
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving && p.Total > 0 && p.Done >= p.Total/3 {
				once.Do(func() {
					go func() {
						defer close(restarted)
						mu.Lock()
						defer mu.Unlock()
						srv.Shutdown()
						time.Sleep(500 * time.Millisecond)
						var err error
						if srv, err = queue.StartServer(opts); err != nil {
							t.Error(err)
						}
					}()
				})
			}
		}}
	sum, err := coordinator.Run(ctx, cfg)
	<-restarted
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, bk, "", spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
}

// shrinkingDisk is the operating system's file system, reporting avail
// bytes free.
type shrinkingDisk struct {
	vfs.FS
	avail *atomic.Uint64
}

func (d shrinkingDisk) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := d.FS.GetDiskUsage(path)
	u.AvailBytes = d.avail.Load()
	return u, err
}

// TestRun_diskFull: when the book's disk runs low, the coordinator stops
// writing and says so in the job status; the results wait in the queue;
// once space is freed the job completes, with every entry right.
func TestRun_diskFull(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	var avail atomic.Uint64
	avail.Store(1 << 40)
	bk, err := book.Open(filepath.Join(t.TempDir(), "small"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20, FS: shrinkingDisk{vfs.Default, &avail}})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := c.startWorker(t, ctx, "w")
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 8}
	var once sync.Once
	filled := make(chan struct{})
	cfg := coordinator.Config{Spec: spec, Book: bk, Queue: c.conn, Stream: c.stream, Log: logger(t), MinFreeBytes: 1 << 30,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving && p.Total > 0 && p.Done >= p.Total/3 {
				once.Do(func() {
					avail.Store(1 << 20) // below MinFreeBytes
					close(filled)
				})
			}
		}}
	done := make(chan error, 1)
	var sum coordinator.Summary
	go func() {
		var err error
		sum, err = coordinator.Run(ctx, cfg)
		done <- err
	}()
	<-filled
	// The job waits, and says why.
	for {
		st, err := c.conn.JobStatus(ctx, spec.ID())
		if err == nil && st.Message == "waiting for disk space" && st.State == string(book.JobSolving) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended while the disk was full: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	avail.Store(1 << 40)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	wait()
	n := checkBook(t, b, bk, "", spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
}

// loadHeapBound bounds the Go heap in use of the process running
// TestRun_load, sampled: the coordinator's state for the job is tens of
// bytes a task, and the embedded server, the book's caches and the fake
// workers hold what they hold whatever the job's size; the heap in use
// peaks at about twice what is live (the collector's default pace), and
// the bound leaves that more than twice again. State kept for each of the
// 240,000 tasks or results until the job's end (a message is a few hundred
// bytes) would cross it.
const loadHeapBound = 256 << 20

// TestRun_load puts a job of more than 100,000 one-position tasks through
// one coordinator and four fast fake workers: no task or result is lost,
// every position of the job is in the book, and the Go heap in use, server,
// book cache and workers included, stays under loadHeapBound. Long:
// skipped with -short. Not parallel: the heap is the whole process's.
func TestRun_load(t *testing.T) {
	if testing.Short() {
		t.Skip("a job of 240,000 one-position tasks")
	}
	board := solver.Standard
	c := newCluster(t, board)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []func()
	for i := range 4 {
		waits = append(waits, c.fakeWorker(t, ctx, fmt.Sprintf("f%d", i)))
	}
	spec := coordinator.Spec{Board: board, Depth: 9, TaskSize: 1}
	var peak atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	<-sampled
	for _, w := range waits {
		w()
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum.Solved < 100000 {
		t.Fatalf("only %d tasks", sum.Solved)
	}
	// Every position of the job is in the book: count them, depth by depth.
	st, err := c.book.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var entries int64
	for _, d := range st.Depths {
		entries += d.Entries
	}
	if entries != sum.Positions {
		t.Errorf("book holds %d entries, the job %d positions", entries, sum.Positions)
	}
	t.Logf("%d positions, %d tasks solved, %d rejected; peak Go heap %d MiB (%.0f bytes a position, server, book cache and workers included)",
		sum.Positions, sum.Solved, sum.Rejected, peak.Load()>>20, float64(peak.Load())/float64(sum.Positions))
	if peak.Load() > loadHeapBound {
		t.Errorf("peak Go heap in use %d MiB, over the bound of %d MiB", peak.Load()>>20, loadHeapBound>>20)
	}
}

// TestRun_serverDownAtStart: the NATS server is down when the coordinator
// sets up the queue, for longer than a request waits (5 s); the
// coordinator waits for it, and the job completes once it is back.
func TestRun_serverDownAtStart(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	dir := t.TempDir()
	addr := testaddr.Free(t)
	opts := queue.ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: addr, Token: "secret"}
	srv, err := queue.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := queue.Connect(ctx, queue.Options{URL: "nats://" + addr, Token: "secret", ReconnectWait: 100 * time.Millisecond, Logger: logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv.Shutdown()
	bk, err := book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	done := make(chan error, 1)
	go func() {
		_, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: bk, Queue: conn, Stream: queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 5}, Log: logger(t)})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Run ended while the server was down: %v", err)
	case <-time.After(6 * time.Second):
	}
	srv, err = queue.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	wconn, err := srv.Connect("worker")
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	var tasks *queue.TaskSource
	for tasks == nil {
		if tasks, err = wconn.Tasks(ctx); err != nil && !queue.Transient(err) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = worker.Run(ctx, tasks, wconn, worker.Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Log: logger(t)})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	checkBook(t, b, bk, spec.Root, spec.Depth)
}

// TestRun_tasksPurged: the tasks of a running job vanish from the stream
// (an operator purges it); the coordinator notices tasks that are neither
// in the stream nor answered, publishes them again, and the job completes.
func TestRun_tasksPurged(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	published := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	var sum coordinator.Summary
	go func() {
		var err error
		sum, err = coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), IdleCheck: time.Second,
			Progress: func(p coordinator.Progress) {
				if p.Phase == book.JobSolving {
					once.Do(func() { close(published) })
				}
			}})
		done <- err
	}()
	<-published
	if err := c.conn.PurgeTasks(ctx, spec.ID()); err != nil {
		t.Fatal(err)
	}
	wait := c.startWorker(t, ctx, "w")
	defer func() { cancel(); wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-testCtx(t).Done():
		t.Fatal("the job did not finish after its tasks were purged")
	}
	n := checkBook(t, b, c.book, spec.Root, spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("summary: %d positions, want %d", sum.Positions, n)
	}
}
