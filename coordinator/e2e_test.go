package coordinator_test

import (
	"context"
	"errors"
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

func TestRun_twoWorkers(t *testing.T) {
	t.Parallel()
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

// TestRun_coordinatorRestart: the coordinator stops a third of the way
// through while the workers go on; started again, it finishes the job, and
// only tasks in a worker's hands at the restart are solved twice.
func TestRun_coordinatorRestart(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	workCtx, stopWorkers := context.WithCancel(context.Background())
	var solved atomic.Int64
	wait1 := c.startCountingWorker(t, workCtx, "w1", &solved)
	wait2 := c.startCountingWorker(t, workCtx, "w2", &solved)
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 32}

	ctx1, crash := context.WithCancel(context.Background())
	var total, atCrash int64
	cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), StatusEvery: time.Second,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving && p.Total > 0 && p.Done >= p.Total/3 && total == 0 {
				total, atCrash = p.Total, solved.Load()
				crash()
			}
		}}
	first, err := coordinator.Run(ctx1, cfg)
	if err == nil || total == 0 {
		t.Fatalf("first run was not stopped midway: %+v, %v", first, err)
	}
	// The workers solve on while no coordinator runs: a result at least
	// comes in between the runs (unless they had answered every task).
	waitUntil(t, "a worker's result after the stop", func() bool { return solved.Load() > atCrash || solved.Load() >= total })
	cfg.Progress = nil
	second, err := coordinator.Run(context.Background(), cfg)
	stopWorkers()
	wait1()
	wait2()
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, "", spec.Depth)
	if second.Positions != int64(n) {
		t.Errorf("second run: %d positions, want %d", second.Positions, n)
	}
	if first.Solved+second.Solved != total {
		t.Errorf("stored %d + %d positions, want %d", first.Solved, second.Solved, total)
	}
	// Two worker threads: at most two tasks were in flight at the restart.
	if extra := solved.Load() - total; extra < 0 || extra > 2*int64(spec.TaskSize) {
		t.Errorf("workers solved %d positions for a job of %d: %d solved twice, want at most %d", solved.Load(), total, extra, 2*spec.TaskSize)
	}
	t.Logf("first run stored %d, second %d; workers solved %d", first.Solved, second.Solved, solved.Load())
}

// TestRun_forgedResults: results for a task never issued, with other
// positions than the task's, or with a score no position can have are
// rejected, and nothing of them is written.
func TestRun_forgedResults(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	// The first run's first task is index 0 of the plan, run 1.
	scratch := newScratchBook(t, b)
	_, tasks := coordinator.PlanTasks(t, spec, scratch)
	first := tasks[0]
	id := uint64(1)<<40 | 0
	scores := make([]int8, len(first))
	wrongKeys := append([]uint64(nil), first...)
	wrongKeys[0] = first[1]
	huge := append([]int8(nil), scores...)
	huge[0] = 30 // no position of 5x4 with 8 or more stones scores 30
	// The job is open (the result stream stores open jobs' results only),
	// as if its coordinator had started and stopped.
	if _, err := c.conn.Results(context.Background(), spec.ID()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []queue.Result{
		{JobID: spec.ID(), TaskID: 1<<40 | 999999, WorkerID: "forger", Keys: first, Scores: scores},
		{JobID: spec.ID(), TaskID: 7 << 40, WorkerID: "forger", Keys: first, Scores: scores},
		{JobID: spec.ID(), TaskID: id, WorkerID: "forger", Keys: wrongKeys, Scores: scores},
		// Another forger: the same message id would be deduplicated.
		{JobID: spec.ID(), TaskID: id, WorkerID: "forger2", Keys: first, Scores: huge},
	} {
		if err := c.conn.PublishResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := c.startWorker(t, ctx, "honest")
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	wait()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 4 {
		t.Errorf("%d results rejected, want 4", sum.Rejected)
	}
	if sum.ByWorker["forger"] != 0 || sum.ByWorker["forger2"] != 0 {
		t.Errorf("the forger's results were stored: %v", sum.ByWorker)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
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

// TestRun_7x6 builds a 7x6 sub-book under a deep root with two workers and
// checks every position against the solver.
func TestRun_7x6(t *testing.T) {
	t.Parallel()
	b := solver.Standard
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait1 := c.startWorker(t, ctx, "w1")
	wait2 := c.startWorker(t, ctx, "w2")
	spec := coordinator.Spec{Board: b, Root: "274552224131661", Depth: 18, TaskSize: 16}
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	wait1()
	wait2()
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, spec.Root, spec.Depth)
	if sum.Positions != int64(n) || sum.Solved == 0 {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
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
			res := queue.Result{JobID: t.JobID, TaskID: t.TaskID, WorkerID: id, Keys: t.Keys, Scores: answer(t)}
			if err := conn.PublishResult(ctx, res); err != nil {
				return
			}
			_ = msg.Ack(ctx)
		}
	})
}

// impossibleScores answers a task of 5x4 positions with 8 stones with a
// score none of them can have: a liar's answer every check rejects.
func impossibleScores(t *queue.Task) []int8 {
	s := make([]int8, len(t.Keys))
	for i := range s {
		s[i] = 30
	}
	return s
}

// TestRun_quarantine: a worker whose results keep being rejected is
// quarantined, the tasks it took are solved by others, and the book is
// right.
func TestRun_quarantine(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	// Both take tasks from the start; the liar, answering at once, takes
	// many, and every task it took is published again.
	waitLiar := c.liar(t, ctx, "liar", impossibleScores)
	waitHonest := c.startWorker(t, ctx, "honest")
	accepted, rejected := map[string]int{}, map[string]int{}
	onResult := func(worker string, ok bool) {
		if ok {
			accepted[worker]++
		} else {
			rejected[worker]++
		}
	}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3, OnResult: onResult})
	st, _ := c.conn.JobStatus(ctx, spec.ID())
	cancel()
	waitLiar()
	waitHonest()
	out := struct {
		sum coordinator.Summary
		err error
	}{sum, err}
	if len(st.Quarantined) != 1 || st.Quarantined[0] != "liar" {
		t.Errorf("job status shows quarantined %v, want [liar]", st.Quarantined)
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	if len(out.sum.Quarantined) != 1 || out.sum.Quarantined[0] != "liar" || out.sum.Rejected < 3 {
		t.Errorf("quarantined %v after %d rejections, want [liar] after 3", out.sum.Quarantined, out.sum.Rejected)
	}
	if out.sum.ByWorker["liar"] != 0 {
		t.Errorf("the liar's results were stored: %v", out.sum.ByWorker)
	}
	// OnResult: the liar's results until its quarantine, none after.
	if rejected["liar"] != 3 || accepted["liar"] != 0 || rejected["honest"] != 0 || accepted["honest"] == 0 {
		t.Errorf("OnResult: accepted %v, rejected %v; want the liar's 3 rejected and the honest worker's accepted", accepted, rejected)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// TestRun_crossCheck: with every task solved twice, a worker that answers
// plausible but wrong scores (in range, so only a second opinion catches
// them) disagrees with an honest one; the coordinator decides, the liar is
// quarantined at its first failed cross-check, the tasks it alone answered
// are solved again, and the book is right. With one worker only, there is
// nobody to check against: the cross-checks are skipped, and the job
// completes.
func TestRun_crossCheck(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	drawAll := func(t *queue.Task) []int8 { return make([]int8, len(t.Keys)) }

	t.Run("liar and honest worker", func(t *testing.T) {
		t.Parallel()
		c := newCluster(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		waitLiar := c.liar(t, ctx, "liar", drawAll)
		waitHonest := c.startWorker(t, ctx, "honest")
		sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), CrossCheck: 1, RefereeTableBytes: 1 << 20})
		cancel()
		waitLiar()
		waitHonest()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Disagreements == 0 || len(sum.Quarantined) != 1 || sum.Quarantined[0] != "liar" {
			t.Errorf("disagreements %d, quarantined %v; want some, and [liar]", sum.Disagreements, sum.Quarantined)
		}
		if l, h := sum.Workers["liar"], sum.Workers["honest"]; l.CrossFailed == 0 || l.Rejected == 0 || h.CrossFailed != 0 || h.CrossPassed == 0 || h.Rejected != 0 || h.Accepted == 0 {
			t.Errorf("results by worker: liar %+v, honest %+v; want the liar's cross-checks failed, the honest worker's passed", l, h)
		}
		if sum.ByWorker["liar"] != 0 {
			t.Errorf("positions stored on the liar's word: %d", sum.ByWorker["liar"])
		}
		t.Logf("%d cross-checked, %d disagreements, %d skipped (the honest worker alone, after the quarantine), %d positions requeued", sum.CrossChecked, sum.Disagreements, sum.CrossSkipped, sum.Requeued)
		checkBook(t, b, c.book, spec.Root, spec.Depth)
	})
	t.Run("one worker", func(t *testing.T) {
		t.Parallel()
		c := newCluster(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wait := c.startWorker(t, ctx, "alone")
		sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), CrossCheck: 0.5, RefereeTableBytes: 1 << 20})
		cancel()
		wait()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Disagreements != 0 || len(sum.Quarantined) != 0 || sum.CrossChecked != 0 || sum.CrossSkipped == 0 {
			t.Errorf("an honest worker alone: %d disagreements, quarantined %v, %d cross-checked, %d skipped; want the cross-checks skipped", sum.Disagreements, sum.Quarantined, sum.CrossChecked, sum.CrossSkipped)
		}
		if c := sum.Workers["alone"]; c.CrossPassed != 0 || c.CrossFailed != 0 || c.Rejected != 0 || c.Accepted == 0 {
			t.Errorf("results of the worker alone: %+v, want accepted, no cross-check", c)
		}
		checkBook(t, b, c.book, spec.Root, spec.Depth)
	})
}

// TestRun_restartInEveryPhase: the coordinator stops while it plans, and
// while it derives; run again each time, it finishes the job, and the book
// holds every position with its exact score.
func TestRun_restartInEveryPhase(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	workCtx, stopWorkers := context.WithCancel(context.Background())
	wait := c.startWorker(t, workCtx, "w")
	defer func() { stopWorkers(); wait() }()
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 64}
	var phases []book.JobState
	for _, stopIn := range []book.JobState{book.JobPlanning, book.JobDeriving} {
		ctx, stop := context.WithCancel(context.Background())
		cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), StatusEvery: time.Second,
			PlanMemKeys: 5000, // runs spilled: the planner's files are mid-way too
			Progress: func(p coordinator.Progress) {
				if p.Phase == stopIn && p.Done > 0 && p.Done != p.Total {
					stop()
				}
			}}
		_, err := coordinator.Run(ctx, cfg)
		stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run stopped while %s: %v, want context.Canceled", stopIn, err)
		}
		rec, _, _ := c.book.Job(spec.ID())
		phases = append(phases, rec.State)
	}
	if phases[0] != book.JobPlanning || phases[1] != book.JobDeriving {
		t.Errorf("job records after the stops: %v, want planning then deriving", phases)
	}
	sum, err := c.runJob(context.Background(), t, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, "", spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("last run: %d positions, want %d", sum.Positions, n)
	}
	if _, err := os.Stat(filepath.Join(c.book.Path(), "plans", spec.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plan of the finished job is still there: %v", err)
	}
}

// TestRun_quarantineKept: a worker quarantined in one run of a job is
// quarantined from the start of the next, which ignores its results
// without rejecting them again.
func TestRun_quarantineKept(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	workCtx, stopWorkers := context.WithCancel(context.Background())
	var waits []func()
	defer func() {
		stopWorkers()
		for _, wait := range waits {
			wait()
		}
	}()
	waits = append(waits, c.liar(t, workCtx, "liar", impossibleScores))

	// The first run stops once the liar is quarantined.
	ctx, stop := context.WithCancel(context.Background())
	var rejected atomic.Int64
	_, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3,
		OnResult: func(worker string, ok bool) {
			if !ok && rejected.Add(1) == 3 {
				stop()
			}
		}})
	stop()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	if rec, _, _ := c.book.Job(spec.ID()); len(rec.Quarantined) != 1 || rec.Quarantined[0] != "liar" {
		t.Fatalf("job record after the first run: quarantined %v, want [liar]", rec.Quarantined)
	}

	waits = append(waits, c.startWorker(t, workCtx, "honest"))
	rejected.Store(0)
	sum, err := coordinator.Run(context.Background(), coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3,
		OnResult: func(worker string, ok bool) {
			if !ok {
				rejected.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Quarantined) != 1 || sum.Quarantined[0] != "liar" || rejected.Load() != 0 || sum.ByWorker["liar"] != 0 {
		t.Errorf("second run: quarantined %v, %d results rejected, the liar's stored %d; want [liar], 0, 0",
			sum.Quarantined, rejected.Load(), sum.ByWorker["liar"])
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// TestRun_deriveProgress: the progress of the deriving phase counts the
// positions above the leaves, out of all of them: it starts at 0 of that
// total, never goes back and ends at the total, which stays the same
// throughout.
func TestRun_deriveProgress(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait := c.startWorker(t, ctx, "w1")
	defer func() { cancel(); wait() }()
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 64}
	var deriving []coordinator.Progress // reports come one at a time
	_, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream,
		Log: logger(t), StatusEvery: time.Second,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobDeriving {
				deriving = append(deriving, p)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.book.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var above int64 // the book holds this job alone
	for _, d := range st.Depths {
		if d.Depth < spec.Depth {
			above += d.Entries
		}
	}
	if len(deriving) < 2 {
		t.Fatalf("%d reports while deriving: want the start and the end at least", len(deriving))
	}
	for i, p := range deriving {
		if p.Total != above {
			t.Fatalf("report %d of %d: %d/%d: want the %d positions above the leaves as the total of every report", i, len(deriving), p.Done, p.Total, above)
		}
		if i == 0 && p.Done != 0 || i > 0 && p.Done < deriving[i-1].Done {
			t.Fatalf("report %d: done %d after %d: want 0 first, then never less", i, p.Done, deriving[max(i-1, 0)].Done)
		}
	}
	if last := deriving[len(deriving)-1]; last.Done != last.Total {
		t.Errorf("last report %d/%d: want all done", last.Done, last.Total)
	}
}
