package coordinator_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// TestRun_workerKeys: workers with keys, over TCP, on a server that knows
// only their keys. The honest worker's results are stored under its name;
// an impersonator with a key of its own, publishing on its own subject
// (the only one the server lets it use) results that claim the honest
// worker's name, is rejected as a forger under its own name and
// quarantined, and the honest worker is not; the book is right.
func TestRun_workerKeys(t *testing.T) {
	b := solver.MustBoard(5, 4)
	dir := t.TempDir()
	var keys []queue.WorkerKey
	files := map[string]string{}
	for _, name := range []string{"alice", "mallory"} {
		files[name] = filepath.Join(dir, name+".nkey")
		pub, err := queue.WriteWorkerKey(files[name], name)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, queue.WorkerKey{Name: name, PublicKey: pub})
	}
	srv, err := queue.StartServer(queue.ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Workers: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	conn, err := srv.Connect("coordinator")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	bk, err := book.Open(filepath.Join(dir, "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bk.Close() })
	stream := queue.StreamConfig{AckWait: 5 * time.Second, MaxDeliver: 3}
	if err := conn.EnsureStreams(context.Background(), stream); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dial := func(name string) *queue.Conn {
		c, err := queue.Connect(ctx, queue.Options{URL: srv.ClientURL(), Name: name, NKey: files[name]})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

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
			res := queue.Result{JobID: task.JobID, TaskID: task.TaskID, WorkerID: "alice", Keys: task.Keys, Scores: make([]int8, len(task.Keys))}
			data, _ := res.MarshalBinary()
			if _, err := raw.Request(queue.WorkerResultSubject(task.JobID, "mallory"), data, 5*time.Second); err != nil {
				t.Errorf("mallory publishing on its own subject: %v", err)
			}
			_ = msg.Ack(ctx)
		}
	}()

	ac := dial("alice")
	atasks, err := ac.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	aliceDone := make(chan error, 1)
	go func() {
		aliceDone <- worker.Run(ctx, atasks, ac, worker.Config{ID: "alice", Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)})
	}()

	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: bk, Queue: conn, Stream: stream, Log: logger(t), QuarantineAfter: 3})
	cancel()
	<-malloryDone
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
