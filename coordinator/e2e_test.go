package coordinator_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// cluster is an embedded NATS server with JetStream and a book, for end to
// end tests.
type cluster struct {
	server *queue.Server
	conn   *queue.Conn
	book   *book.Book
	board  *solver.Board
	stream queue.StreamConfig
}

func newCluster(tb testing.TB, b *solver.Board) *cluster {
	tb.Helper()
	dir := tb.TempDir()
	srv, err := queue.StartServer(queue.ServerOptions{StoreDir: filepath.Join(dir, "nats")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Shutdown)
	conn, err := srv.Connect("test")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	bk, err := book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bk.Close() })
	c := &cluster{server: srv, conn: conn, book: bk, board: b, stream: queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 3}}
	if err := conn.EnsureStreams(context.Background(), c.stream); err != nil {
		tb.Fatal(err)
	}
	return c
}

// logger returns a logger writing to the test log when -v is given.
func logger(tb testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startWorker runs a worker with its own connection until ctx is done; the
// returned wait blocks until it has stopped.
func (c *cluster) startWorker(tb testing.TB, ctx context.Context, id string) (wait func()) {
	tb.Helper()
	conn, err := c.server.Connect("worker " + id)
	if err != nil {
		tb.Fatal(err)
	}
	tasks, err := conn.Tasks(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer conn.Close()
		err := worker.Run(ctx, tasks, conn, worker.Config{ID: id, Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(tb)})
		if err != nil {
			tb.Errorf("worker %s: %v", id, err)
		}
	}()
	return wg.Wait
}

// runJob runs the coordinator on spec.
func (c *cluster) runJob(ctx context.Context, tb testing.TB, spec coordinator.Spec) (coordinator.Summary, error) {
	return coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(tb).With("role", "coordinator"), StatusEvery: time.Second})
}

// checkBook checks that the book holds every non-terminal position of the
// job with the solver's score.
func checkBook(tb testing.TB, b *solver.Board, bk *book.Book, root string, depth int) int {
	tb.Helper()
	s, _ := solver.New(b, 16<<20)
	seen := map[uint64]bool{}
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if p.Moves() > 0 && p.LastMoveWon() || seen[p.CanonicalKey()] {
			return
		}
		seen[p.CanonicalKey()] = true
		v, ok, err := bk.Get(p)
		if err != nil || !ok {
			tb.Fatalf("position not in the book (%v):\n%v", err, p)
		}
		if want := s.Solve(p); v.Score != want {
			tb.Fatalf("book %d, solver %d:\n%v", v.Score, want, p)
		}
		if p.Moves() == depth {
			return
		}
		for col := range b.Width() {
			if p.CanPlay(col) {
				child := p
				child.Play(col)
				walk(child)
			}
		}
	}
	r, _ := b.Parse(root)
	walk(r)
	return len(seen)
}

func TestRun_twoWorkers(t *testing.T) {
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait1 := c.startWorker(t, ctx, "w1")
	wait2 := c.startWorker(t, ctx, "w2")
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 32}
	sum, err := c.runJob(ctx, t, spec)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	wait1()
	wait2()
	n := checkBook(t, b, c.book, "", spec.Depth)
	if sum.Positions != int64(n) || sum.Solved == 0 || sum.Derived == 0 || sum.Solved+sum.Derived+sum.Immediate != sum.Positions {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
	if len(sum.ByWorker) != 2 || sum.ByWorker["w1"] == 0 || sum.ByWorker["w2"] == 0 {
		t.Errorf("the two workers did not share the work: %v", sum.ByWorker)
	}
	// Run again: nothing to do.
	again, err := c.runJob(context.Background(), t, spec)
	if err != nil || !again.AlreadyDone {
		t.Errorf("second run: %+v, %v", again, err)
	}
}
