package coordinator_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
	"github.com/nats-io/nats.go"
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
	return newClusterWith(tb, b, &book.Options{CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
}

// newClusterWith is newCluster with the book opened with opts (nil: the
// defaults), made for board b.
func newClusterWith(tb testing.TB, b *solver.Board, opts *book.Options) *cluster {
	tb.Helper()
	o := book.Options{}
	if opts != nil {
		o = *opts
	}
	o.Create, o.Board = true, b
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
	bk, err := book.Open(filepath.Join(dir, "book"), &o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bk.Close() })
	// MaxDeliver 10: on a loaded machine a delivery is now and then lost
	// (a pull that ends as the server sends; the task comes back after
	// the AckWait), and three such losses would fail a task of a test
	// that is not about them (worker_faults_test.go sets its own).
	c := &cluster{server: srv, conn: conn, book: bk, board: b, stream: queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 10}}
	if err := conn.EnsureStreams(context.Background(), c.stream); err != nil {
		tb.Fatal(err)
	}
	return c
}

// newOperatorCluster is a cluster whose server listens on the loopback
// with the operator's token "operator", its streams set up with stream,
// and a plain nats.go connection holding that token, as a client with
// every right: for tests of what such a client does to a job.
func newOperatorCluster(tb testing.TB, b *solver.Board, stream queue.StreamConfig) (*cluster, *nats.Conn) {
	tb.Helper()
	dir := tb.TempDir()
	srv, err := queue.StartServer(queue.ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Token: "operator"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Shutdown)
	conn, err := srv.Connect("coordinator")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	bk, err := book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bk.Close() })
	c := &cluster{server: srv, conn: conn, book: bk, board: b, stream: stream}
	if err := conn.EnsureStreams(context.Background(), stream); err != nil {
		tb.Fatal(err)
	}
	raw, err := nats.Connect(srv.ClientURL(), nats.Token("operator"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(raw.Close)
	return c, raw
}

// logger returns a logger writing to the test log when -v is given.
func logger(tb testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// goWorker runs loop in a goroutine with a connection of its own, named
// name, and the workers' task source; the returned wait blocks until loop
// has returned and the connection is closed.
func (c *cluster) goWorker(tb testing.TB, ctx context.Context, name string, loop func(conn *queue.Conn, tasks *queue.TaskSource)) (wait func()) {
	tb.Helper()
	conn, err := c.server.Connect(name)
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
		loop(conn, tasks)
	}()
	return wg.Wait
}

// startWorker runs a real worker until ctx is done; the returned wait
// blocks until it has stopped.
func (c *cluster) startWorker(tb testing.TB, ctx context.Context, id string) (wait func()) {
	return c.startCountingWorker(tb, ctx, id, &atomic.Int64{})
}

// startCountingWorker is startWorker that adds the positions the worker
// solves to count.
func (c *cluster) startCountingWorker(tb testing.TB, ctx context.Context, id string, count *atomic.Int64) (wait func()) {
	return c.goWorker(tb, ctx, "worker "+id, func(conn *queue.Conn, tasks *queue.TaskSource) {
		pub := countingPublisher{Publisher: conn, positions: count}
		if err := worker.Run(ctx, tasks, pub, worker.Config{ID: id, Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(tb)}); err != nil {
			tb.Errorf("worker %s: %v", id, err)
		}
	})
}

// countingPublisher counts the positions of the results a worker publishes.
type countingPublisher struct {
	worker.Publisher
	positions *atomic.Int64
}

func (p countingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	err := p.Publisher.PublishResult(ctx, r)
	if err == nil {
		p.positions.Add(int64(len(r.Keys)))
	}
	return err
}

// testCtx returns a context that ends when t ends, or 30 s before the
// deadline of the test binary (go test -timeout), whichever comes first:
// a test that waits in vain then fails saying for what, however slow the
// machine, instead of with the binary's panic.
func testCtx(t *testing.T) context.Context {
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-30*time.Second))
		t.Cleanup(cancel)
	}
	return ctx
}

// waitUntil returns once cond is true, which it asks every 10 ms; it fails
// t if testCtx ends first: what names what it waits for.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited in vain for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// runJob runs the coordinator on spec.
func (c *cluster) runJob(ctx context.Context, tb testing.TB, spec coordinator.Spec) (coordinator.Summary, error) {
	return coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(tb).With("role", "coordinator"), StatusEvery: time.Second})
}

// checkBook checks that the book holds every non-terminal position of the
// job with the solver's score, and returns their number.
func checkBook(tb testing.TB, b *solver.Board, bk *book.Book, root string, depth int) int {
	tb.Helper()
	want := solverScores(b, root, depth)
	for _, ps := range want {
		v, ok, err := bk.Get(ps.p)
		if err != nil || !ok {
			tb.Fatalf("position not in the book (%v):\n%v", err, ps.p)
		}
		if v.Score != ps.score {
			tb.Fatalf("book %d, solver %d:\n%v", v.Score, ps.score, ps.p)
		}
	}
	return len(want)
}

// positionScore is a position and the solver's score of it.
type positionScore struct {
	p     solver.Position
	score int
}

// solvedJobs holds what solverScores found, by job: many tests build the
// same jobs, and the solver's scores are the same for each.
var solvedJobs sync.Map // "WxH/root/depth" -> *solvedJob

type solvedJob struct {
	once   sync.Once
	scores map[uint64]positionScore
}

// solverScores returns the solver's score of every non-terminal position
// of a job, by canonical key, found once in the test process.
func solverScores(b *solver.Board, root string, depth int) map[uint64]positionScore {
	v, _ := solvedJobs.LoadOrStore(fmt.Sprintf("%dx%d/%s/%d", b.Width(), b.Height(), root, depth), &solvedJob{})
	job := v.(*solvedJob)
	job.once.Do(func() {
		s, _ := solver.New(b, 16<<20)
		job.scores = map[uint64]positionScore{}
		var walk func(p solver.Position)
		walk = func(p solver.Position) {
			if p.Moves() > 0 && p.LastMoveWon() {
				return
			}
			if _, seen := job.scores[p.CanonicalKey()]; seen {
				return
			}
			job.scores[p.CanonicalKey()] = positionScore{p, s.Solve(p)}
			if p.Moves() == depth {
				return
			}
			for _, child := range p.Children() {
				walk(child)
			}
		}
		r, _ := b.Parse(root)
		walk(r)
	})
	return job.scores
}

// newScratchBook returns an empty book, to plan a job without touching the
// cluster's.
func newScratchBook(tb testing.TB, b *solver.Board) *book.Book {
	tb.Helper()
	bk, err := book.Open(filepath.Join(tb.TempDir(), "scratch"), &book.Options{Create: true, Board: b, CacheBytes: 1 << 20, MemTableBytes: 1 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bk.Close() })
	return bk
}

// liar is a worker that answers every task at once with wrong scores made
// by answer, and acks it.
func (c *cluster) liar(tb testing.TB, ctx context.Context, id string, answer func(t *queue.Task) []int8) (wait func()) {
	return c.goWorker(tb, ctx, "liar "+id, func(conn *queue.Conn, tasks *queue.TaskSource) {
		for {
			msg, err := tasks.Next(ctx)
			if err != nil {
				return
			}
			t := &msg.Task
			// Acked first: the liar sends no progress, and on a loaded
			// machine its publish can outlast the AckWait, the task then
			// delivered again until MaxDeliver gives up on it.
			_ = msg.Ack(ctx)
			res := queue.Result{JobID: t.JobID, TaskID: t.TaskID, WorkerID: id, Keys: t.Keys, Scores: answer(t)}
			if err := conn.PublishResult(ctx, res); err != nil {
				return
			}
		}
	})
}
