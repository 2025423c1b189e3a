package coordinator_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/internal/testaddr"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

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
