package coordinator_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// keyedCluster is an embedded server listening on loopback that accepts
// the named workers by key, the coordinator's connection, a book and the
// key files.
type keyedCluster struct {
	srv    *queue.Server
	conn   *queue.Conn
	book   *book.Book
	stream queue.StreamConfig
	files  map[string]string
	keys   map[string]queue.WorkerKey
}

func newKeyedCluster(t *testing.T, b *solver.Board, names ...string) *keyedCluster {
	t.Helper()
	dir := t.TempDir()
	k := &keyedCluster{files: map[string]string{}, keys: map[string]queue.WorkerKey{}, stream: queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 10}} // as newClusterWith's
	var keys []queue.WorkerKey
	for _, name := range names {
		k.files[name] = filepath.Join(dir, name+".nkey")
		pub, err := queue.WriteWorkerKey(k.files[name], name)
		if err != nil {
			t.Fatal(err)
		}
		k.keys[name] = queue.WorkerKey{Name: name, PublicKey: pub}
		keys = append(keys, k.keys[name])
	}
	var err error
	if k.srv, err = queue.StartServer(queue.ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Workers: keys}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.srv.Shutdown)
	if k.conn, err = k.srv.Connect("coordinator"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.conn.Close() })
	if k.book, err = book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.book.Close() })
	if err := k.conn.EnsureStreams(context.Background(), k.stream); err != nil {
		t.Fatal(err)
	}
	return k
}

// dial connects as worker name with its key, over TCP.
func (k *keyedCluster) dial(t *testing.T, ctx context.Context, name string) *queue.Conn {
	t.Helper()
	c, err := queue.Connect(ctx, queue.Options{URL: k.srv.ClientURL(), Name: name, NKey: k.files[name], ReconnectWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// runWorker runs a real worker as name until ctx is done or its
// connection is closed; the result of worker.Run comes on the channel.
func (k *keyedCluster) runWorker(t *testing.T, ctx context.Context, name string) <-chan error {
	t.Helper()
	c := k.dial(t, ctx, name)
	tasks, err := c.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, tasks, c, worker.Config{ID: name, Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)})
	}()
	return done
}

// TestRun_workerKeys: workers with keys, over TCP, on a server that knows
// only their keys. The honest worker's results are stored under its name;
// an impersonator with a key of its own, publishing on its own subject
// (the only one the server lets it use) results that claim the honest
// worker's name, is rejected as a forger under its own name and
// quarantined, and the honest worker is not; the book is right.
func TestRun_workerKeys(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice", "mallory")
	files, srv, conn, bk, stream := k.files, k.srv, k.conn, k.book, k.stream
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dial := func(name string) *queue.Conn { return k.dial(t, ctx, name) }

	// mallory: takes tasks like a worker, answers each at once as "alice"
	// on its own subject, with plain nats.go.
	mc := dial("mallory")
	mtasks, err := mc.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nk, err := nats.NkeyOptionFromSeed(files["mallory"])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := nats.Connect(srv.ClientURL(), nk, nats.CustomInboxPrefix(queue.WorkerInbox("mallory")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	malloryDone := make(chan struct{})
	go func() {
		defer close(malloryDone)
		for {
			msg, err := mtasks.Next(ctx)
			if err != nil {
				return
			}
			task := &msg.Task
			// Acked first: mallory sends no progress, and on a loaded
			// machine its publish can outlast the AckWait (2 s), the task
			// then delivered again until MaxDeliver gives up on it.
			_ = msg.Ack(ctx)
			res := queue.Result{JobID: task.JobID, TaskID: task.TaskID, WorkerID: "alice", Keys: task.Keys, Scores: make([]int8, len(task.Keys))}
			data, _ := res.MarshalBinary()
			if _, err := raw.Request(queue.WorkerResultSubject(task.JobID, "mallory"), data, 5*time.Second); err != nil {
				t.Errorf("mallory publishing on its own subject: %v", err)
			}
		}
	}()

	// alice starts once mallory is quarantined: with lanes, two workers
	// that start together take different stretches of the job, and alice
	// could end it before mallory answers three tasks.
	var aliceDone <-chan error
	rejected := 0
	onResult := func(worker string, ok bool) {
		if !ok && worker == "mallory" {
			if rejected++; rejected == 3 {
				aliceDone = k.runWorker(t, ctx, "alice")
			}
		}
	}

	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: bk, Queue: conn, Stream: stream, Log: logger(t), QuarantineAfter: 3, OnResult: onResult})
	cancel()
	<-malloryDone
	if aliceDone == nil {
		t.Fatal("mallory was never rejected three times")
	}
	if werr := <-aliceDone; werr != nil {
		t.Errorf("alice: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Quarantined) != 1 || sum.Quarantined[0] != "mallory" || sum.Rejected < 3 {
		t.Errorf("quarantined %v after %d rejections, want [mallory] after 3 or more", sum.Quarantined, sum.Rejected)
	}
	if sum.ByWorker["mallory"] != 0 || sum.ByWorker["alice"] != sum.Solved {
		t.Errorf("positions by worker %v, want all %d alice's", sum.ByWorker, sum.Solved)
	}
	checkBook(t, b, bk, spec.Root, spec.Depth)
}

// TestRun_workerRemoved: a worker removed while the job runs
// (Server.SetWorkers, as c4book worker remove has the job do) is cut off
// at once, refused when it connects again, and its worker stops; the job
// goes on with the other and the book is right.
func TestRun_workerRemoved(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice", "bob")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bobDone := k.runWorker(t, ctx, "bob")
	var removed atomic.Bool
	var afterRemoval atomic.Int64
	onResult := func(worker string, ok bool) {
		if worker == "bob" && ok && removed.CompareAndSwap(false, true) {
			// bob's first result is in: remove bob. (Called on the
			// coordinator's goroutine: the reload does not wait for it.)
			if err := k.srv.SetWorkers([]queue.WorkerKey{k.keys["alice"]}); err != nil {
				t.Errorf("SetWorkers: %v", err)
			}
			return
		}
		if worker == "bob" && removed.Load() {
			afterRemoval.Add(1) // published before the removal, delivered after
		}
	}
	var aliceDone <-chan error
	runDone := make(chan struct{})
	var sum coordinator.Summary
	var runErr error
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}
	go func() {
		defer close(runDone)
		sum, runErr = coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), OnResult: onResult, StatusEvery: time.Second})
	}()
	select {
	case err := <-bobDone:
		if !errors.Is(err, queue.ErrClosed) {
			t.Errorf("bob stopped with %v, want its connection closed", err)
		}
	case <-testCtx(t).Done():
		t.Fatal("bob still works: its removal did not stop it")
	}
	if !removed.Load() {
		t.Fatal("bob stopped before its first result")
	}
	if _, err := queue.Connect(ctx, queue.Options{URL: k.srv.ClientURL(), NKey: k.files["bob"]}); !errors.Is(err, queue.ErrAuth) {
		t.Errorf("bob connecting again: %v, want ErrAuth", err)
	}
	aliceDone = k.runWorker(t, ctx, "alice")
	<-runDone
	cancel()
	if err := <-aliceDone; err != nil {
		t.Errorf("alice: %v", err)
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if sum.ByWorker["alice"] == 0 || sum.ByWorker["bob"] == 0 {
		t.Errorf("positions by worker %v: want both, bob's before its removal", sum.ByWorker)
	}
	t.Logf("by worker %v; bob's results accepted after the removal (in the stream before it): %d", sum.ByWorker, afterRemoval.Load())
	checkBook(t, b, k.book, spec.Root, spec.Depth)
}

// TestRun_unsignedResults: results on a registered worker's subject that
// its key did not sign are refused, and do not count against it. Here the
// operator's credentials forge plausible results as alice's (as any
// holder of the token could, or a worker having the server reply there):
// before, they were stored as alice's; now alice's own, signed, are.
func TestRun_unsignedResults(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice")
	if _, err := k.book.AddWorker("alice", k.keys["alice"].PublicKey); err != nil {
		t.Fatal(err)
	}
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	_, tasks := coordinator.PlanTasks(t, spec, newScratchBook(t, b))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := k.conn.Results(ctx, spec.ID()); err != nil { // the job open, as a coordinator leaves it
		t.Fatal(err)
	}
	const forged = 5
	for i := range forged {
		r := queue.Result{JobID: spec.ID(), TaskID: uint64(1)<<40 | uint64(i), WorkerID: "alice", Keys: tasks[i], Scores: make([]int8, len(tasks[i]))}
		if err := k.conn.PublishResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	aliceDone := k.runWorker(t, ctx, "alice")
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t)})
	cancel()
	if werr := <-aliceDone; werr != nil {
		t.Errorf("alice: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unsigned != forged || sum.Rejected != 0 || len(sum.Quarantined) != 0 || sum.Workers["alice"].Rejected != 0 {
		t.Errorf("%d unsigned, %d rejected, quarantined %v, alice %+v: want the %d forgeries refused, alice untouched",
			sum.Unsigned, sum.Rejected, sum.Quarantined, sum.Workers["alice"], forged)
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
}

// TestRun_hoarder: a worker that takes tasks and holds them, telling the
// server it is still at them, never answering, does not stall the job:
// its tasks are overdue once honest answers came for tasks published
// after them, and are published again for others. Before, the job waited
// for as long as the hoarder held on. Tail copies are off: they would
// give the held tasks copies at the job's end before they are overdue
// (TestRun_straggler), and this is the overdue path's test end to end.
func TestRun_hoarder(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice", "mallory")
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}
	cfg := coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), StatusEvery: time.Second}
	coordinator.DisableTailCopies(&cfg)
	job := startJob(ctx, cfg)
	mc := k.dial(t, ctx, "mallory")
	mtasks, err := mc.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var held []*queue.TaskMsg
	for range 10 {
		m, err := mtasks.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, m)
	}
	stopHoarding := keepAt(ctx, held, 500*time.Millisecond) // well within AckWait (5 s)
	aliceDone := k.runWorker(t, ctx, "alice")
	sum, runErr := job()
	stopHoarding()
	cancel()
	if err := <-aliceDone; err != nil {
		t.Errorf("alice: %v", err)
	}
	if runErr != nil {
		t.Fatalf("the job with a hoarder: %v", runErr)
	}
	if sum.Overdue < int64(len(held)) || sum.TailCopies != 0 {
		t.Errorf("%d tasks published again as overdue and %d as tail copies, want at least the %d held overdue, no tail copy", sum.Overdue, sum.TailCopies, len(held))
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
	t.Logf("%d tasks overdue, %d tail copies; wall %v", sum.Overdue, sum.TailCopies, sum.Wall)
}

// TestRun_straggler: a worker that holds a task to the job's end, honestly
// at it (InProgress) but slow, does not hold the job for its time: once no
// lane has a task waiting, the task gets a copy for the worker with nothing
// to do, long before it would be overdue (four AckWaits, 2 min here).
// Without tail copies the job waited for the overdue copy.
func TestRun_straggler(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice", "slow")
	k.stream.AckWait = 30 * time.Second
	ctx, cancel := context.WithTimeout(testCtx(t), time.Minute)
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}
	job := startJob(ctx, coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), StatusEvery: time.Second})
	sc := k.dial(t, ctx, "slow")
	stasks, err := sc.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held, err := stasks.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopSlow := keepAt(ctx, []*queue.TaskMsg{held}, time.Second)
	aliceDone := k.runWorker(t, ctx, "alice")
	sum, runErr := job()
	stopSlow()
	cancel()
	if err := <-aliceDone; err != nil {
		t.Errorf("alice: %v", err)
	}
	if runErr != nil {
		t.Fatalf("the job with a straggler: %v (waited for its task)", runErr)
	}
	if sum.TailCopies < 1 || sum.Overdue != 0 {
		t.Errorf("%d tail copies, %d overdue: want the straggler's task copied at the end, none overdue", sum.TailCopies, sum.Overdue)
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
	t.Logf("%d tail copies; wall %v", sum.TailCopies, sum.Wall)
}

// startJob runs the job of cfg in the background; the returned wait gives
// its summary and error once it ends.
func startJob(ctx context.Context, cfg coordinator.Config) (wait func() (coordinator.Summary, error)) {
	done := make(chan struct{})
	var sum coordinator.Summary
	var err error
	go func() {
		defer close(done)
		sum, err = coordinator.Run(ctx, cfg)
	}()
	return func() (coordinator.Summary, error) {
		<-done
		return sum, err
	}
}

// keepAt reports progress on held every period, as a worker at its tasks
// that never answers, until the returned stop is called.
func keepAt(ctx context.Context, held []*queue.TaskMsg, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, m := range held {
					_ = m.InProgress()
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
