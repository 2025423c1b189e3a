package queue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestConn_PublishTasks is the round trip: the coordinator publishes tasks,
// workers take them one at a time, publish results and ack; the
// coordinator reads the results and acks; both streams end empty.
func TestConn_PublishTasks(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	worker := connectTo(t, s, "worker")
	tasks := []Task{testTask(t, "j1", 1, 10), testTask(t, "j1", 2, 1), testTask(t, "j1", 3, 64)}
	publishTasks(t, coord, tasks...)
	if n := streamMsgs(t, coord, TaskStream); n != 3 {
		t.Fatalf("task stream holds %d messages, want 3", n)
	}

	src := taskSource(t, worker)
	got := map[uint64]bool{}
	for range tasks {
		m := nextTask(t, src)
		want := tasks[m.Task.TaskID-1]
		if m.Task.JobID != "j1" || len(m.Task.Keys) != len(want.Keys) || m.Task.Keys[0] != want.Keys[0] || m.Task.Width != 7 || m.Task.Height != 6 {
			t.Errorf("got %v, want %v", &m.Task, &want)
		}
		if m.Delivered != 1 || m.Seq == 0 {
			t.Errorf("Delivered %d, Seq %d; want 1 and a sequence", m.Delivered, m.Seq)
		}
		got[m.Task.TaskID] = true
		if err := m.InProgress(); err != nil {
			t.Errorf("InProgress: %v", err)
		}
		if err := worker.PublishResult(testCtx(t, 30*time.Second), resultFor(m.Task, "w1")); err != nil {
			t.Fatalf("PublishResult: %v", err)
		}
		if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
	if len(got) != 3 {
		t.Errorf("got tasks %v, want 1, 2 and 3", got)
	}
	if n := streamMsgs(t, coord, TaskStream); n != 0 {
		t.Errorf("task stream holds %d messages after the acks, want 0", n)
	}

	results, err := coord.Results(testCtx(t, 10*time.Second), "j1")
	if err != nil {
		t.Fatalf("Results: %v", err)
	}
	var msgs []*ResultMsg
	for len(msgs) < 3 {
		batch, bad, err := results.Fetch(testCtx(t, 30*time.Second), 10)
		if err != nil || len(bad) != 0 {
			t.Fatalf("Fetch: %v, %v", bad, err)
		}
		msgs = append(msgs, batch...)
	}
	for _, m := range msgs {
		r, want := m.Result, tasks[m.Result.TaskID-1]
		if r.WorkerID != "w1" || len(r.Scores) != len(want.Keys) || r.Keys[len(r.Keys)-1] != want.Keys[len(want.Keys)-1] {
			t.Errorf("result %v does not match task %v", &r, &want)
		}
		if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
			t.Errorf("Ack result: %v", err)
		}
	}
	if len(msgs) != 3 {
		t.Errorf("got %d results, want 3", len(msgs))
	}
	if n := streamMsgs(t, coord, ResultStream); n != 0 {
		t.Errorf("result stream holds %d messages after the acks, want 0", n)
	}
}

// TestConn_PublishTasks_duplicates publishes the same tasks twice within
// the duplicate window: the stream stores them once. Each task's copy
// follows it in the same call (more than publishWindow publishes), and
// the last tasks are published again in a second call: every copy comes
// within moments of its task, however slow the machine (publishing all
// the tasks twice over could take longer than the window under load).
func TestConn_PublishTasks_duplicates(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	var tasks, twice []Task
	for i := range 2000 {
		task := testTask(t, "dup", uint64(i), 4)
		tasks = append(tasks, task)
		twice = append(twice, task, task)
	}
	publishTasks(t, c, twice...)
	publishTasks(t, c, tasks[len(tasks)-10:]...)
	if n := streamMsgs(t, c, TaskStream); n != 2000 {
		t.Errorf("stream holds %d tasks after publishing 2000 tasks twice, want 2000", n)
	}
	other := testTask(t, "dup2", 0, 4) // same task id, other job: another task
	publishTasks(t, c, other)
	if n := streamMsgs(t, c, TaskStream); n != 2001 {
		t.Errorf("stream holds %d tasks, want 2001", n)
	}
}

func TestConn_PublishTasks_invalid(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	tasks := []Task{testTask(t, "j", 1, 2), {JobID: "j", TaskID: 2, Width: 7, Height: 6}}
	err := c.PublishTasks(testCtx(t, 10*time.Second), tasks)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "task 1 of 2") {
		t.Fatalf("PublishTasks = %v, want ErrMalformed naming task 1 of 2", err)
	}
	if n := streamMsgs(t, c, TaskStream); n != 0 {
		t.Errorf("stream holds %d tasks, want none published", n)
	}
}

func TestConn_PurgeTasks(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	publishTasks(t, c, testTask(t, "a", 1, 2), testTask(t, "b", 1, 2), testTask(t, "a", 2, 2))
	if err := c.PurgeTasks(testCtx(t, 10*time.Second), "a"); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, c, TaskStream); n != 1 {
		t.Fatalf("stream holds %d tasks, want b's one", n)
	}
	if m := nextTask(t, taskSource(t, c)); m.Task.JobID != "b" {
		t.Errorf("got %v, want b's task", &m.Task)
	}
	if err := c.PurgeTasks(testCtx(t, 10*time.Second), "a.*"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("PurgeTasks(a.*) = %v, want ErrInvalidID", err)
	}
}

// TestTaskSource_Next_redelivery: a task not acked within AckWait goes to
// another worker.
func TestTaskSource_Next_redelivery(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, StreamConfig{AckWait: time.Second, MaxDeliver: 5})
	publishTasks(t, coord, testTask(t, "r", 7, 3))

	src := taskSource(t, connectTo(t, s, "worker-dies"))
	if aw := src.AckWait(); aw != time.Second {
		t.Errorf("AckWait = %v, want the coordinator's 1s", aw)
	}
	dead := nextTask(t, src)
	if dead.Delivered != 1 {
		t.Errorf("first delivery: Delivered = %d", dead.Delivered)
	}
	// The first worker neither acks nor reports progress: after AckWait
	// the task goes to the next worker that asks.
	m := nextTask(t, taskSource(t, connectTo(t, s, "worker-lives")))
	if m.Task.TaskID != 7 || m.Delivered != 2 || m.Seq != dead.Seq {
		t.Errorf("redelivered task %v, Delivered %d, Seq %d; want task 7, 2, %d", &m.Task, m.Delivered, m.Seq, dead.Seq)
	}
	if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	// The first worker's late ack is harmless.
	_ = dead.Ack(testCtx(t, 10*time.Second))
	if n := streamMsgs(t, coord, TaskStream); n != 0 {
		t.Errorf("stream holds %d tasks, want 0", n)
	}
}

// TestTaskMsg_InProgress: a worker that reports progress keeps its task
// past AckWait; no other worker gets it meanwhile.
func TestTaskMsg_InProgress(t *testing.T) {
	t.Parallel()
	const ackWait = time.Second
	s, coord := setupQueue(t, StreamConfig{AckWait: ackWait, MaxDeliver: 5})
	publishTasks(t, coord, testTask(t, "p", 1, 3))
	m := nextTask(t, taskSource(t, connectTo(t, s, "slow-worker")))

	// Another worker waits for a task during 4 AckWaits while the first
	// reports progress every AckWait/4.
	other := taskSource(t, connectTo(t, s, "other-worker"))
	ctx, cancel := context.WithTimeout(context.Background(), 4*ackWait)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(ackWait / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := m.InProgress(); err != nil {
					t.Errorf("InProgress: %v", err)
				}
			}
		}
	}()
	got, err := other.Next(ctx)
	wg.Wait()
	if err == nil {
		t.Fatalf("another worker got %v (delivery %d) while the first reported progress", &got.Task, got.Delivered)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v, want the context's deadline", err)
	}
	if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
		t.Fatalf("Ack after 4 AckWaits of progress: %v", err)
	}
}

// TestTaskMsg_Nak: a task handed back comes again, no sooner than
// MinNakDelay, and counts as a delivery.
func TestTaskMsg_Nak(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	publishTasks(t, coord, testTask(t, "n", 1, 3))
	src := taskSource(t, connectTo(t, s, "worker"))
	m := nextTask(t, src)
	naked := time.Now()
	if err := m.Nak(0); err != nil {
		t.Fatal(err)
	}
	m2 := nextTask(t, src)
	if m2.Delivered != 2 {
		t.Errorf("Delivered = %d after a Nak, want 2", m2.Delivered)
	}
	// A lower bound only: the server held the task at least this long.
	if d := time.Since(naked); d < MinNakDelay-100*time.Millisecond {
		t.Errorf("Nak(0) came back after %v, want at least MinNakDelay %v", d, MinNakDelay)
	}
	if err := m2.Term(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "removed after Term", func() bool { return streamMsgs(t, coord, TaskStream) == 0 })
}

// TestConn_WatchMaxDeliveries: a task that is never acked ends, after
// MaxDeliver deliveries, in an advisory; it stays in the stream, readable
// by its sequence, until the coordinator deletes it.
func TestConn_WatchMaxDeliveries(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, StreamConfig{AckWait: time.Second, MaxDeliver: 2})
	failed := make(chan uint64, 10)
	if err := coord.WatchMaxDeliveries(testCtx(t, 60*time.Second), func(seq uint64) { failed <- seq }); err != nil {
		t.Fatal(err)
	}
	task := testTask(t, "m", 3, 5)
	publishTasks(t, coord, task, testTask(t, "m", 4, 1))

	src := taskSource(t, connectTo(t, s, "crashing-worker"))
	var seq uint64
	for delivery := uint64(1); delivery <= 2; {
		m := nextTask(t, src)
		if m.Task.TaskID == 4 {
			if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if m.Delivered != delivery {
			t.Errorf("delivery %d: Delivered = %d", delivery, m.Delivered)
		}
		seq = m.Seq
		delivery++ // and never ack
	}

	// The server gives up on the task when it would deliver it a third
	// time, which takes a worker asking for a task.
	pullCtx, stopPull := context.WithCancel(context.Background())
	pulled := make(chan *TaskMsg, 1)
	go func() {
		m, _ := src.Next(pullCtx)
		pulled <- m
	}()
	select {
	case got := <-failed:
		if got != seq {
			t.Fatalf("advisory for sequence %d, want %d", got, seq)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no max-deliveries advisory within 60s")
	}
	stopPull()
	if m := <-pulled; m != nil {
		t.Errorf("task %v delivered again after max deliveries (delivery %d)", &m.Task, m.Delivered)
	}
	if n := streamMsgs(t, coord, TaskStream); n != 1 {
		t.Errorf("stream holds %d tasks after max deliveries, want the failed one", n)
	}
	got, err := coord.TaskBySeq(testCtx(t, 10*time.Second), seq)
	if err != nil {
		t.Fatalf("TaskBySeq(%d): %v", seq, err)
	}
	if got.JobID != "m" || got.TaskID != 3 || len(got.Keys) != 5 || got.Keys[4] != task.Keys[4] {
		t.Errorf("TaskBySeq = %v, want %v", &got, &task)
	}
	if err := coord.DeleteTask(testCtx(t, 10*time.Second), seq); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	if n := streamMsgs(t, coord, TaskStream); n != 0 {
		t.Errorf("stream holds %d tasks after DeleteTask, want 0", n)
	}
	if _, err := coord.TaskBySeq(testCtx(t, 10*time.Second), seq); !errors.Is(err, ErrNotFound) {
		t.Errorf("TaskBySeq after delete = %v, want ErrNotFound", err)
	}
	if err := coord.DeleteTask(testCtx(t, 10*time.Second), seq); err != nil {
		t.Errorf("DeleteTask twice: %v", err)
	}
}

// TestTaskSource_Next_malformed: a task message that does not decode is
// terminated and reported, and the source goes on.
func TestTaskSource_Next_malformed(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	ctx := testCtx(t, 30*time.Second)
	junk := newMsg(TaskLaneSubject("bad", 0), "prankster", []byte("T\x01\x07\x06not a task"))
	if _, err := coord.js.PublishMsg(ctx, junk); err != nil {
		t.Fatal(err)
	}
	// A well-formed task of another job than its subject says.
	data, err := (&Task{JobID: "other", TaskID: 1, Width: 7, Height: 6, Keys: []uint64{emptyKey()}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coord.js.Publish(ctx, TaskLaneSubject("bad", 0), data); err != nil {
		t.Fatal(err)
	}
	publishTasks(t, coord, testTask(t, "good", 1, 2))

	src := taskSource(t, connectTo(t, s, "worker"))
	_, err = src.Next(ctx)
	var derr *DecodeError
	if !errors.As(err, &derr) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("Next = %v, want a *DecodeError wrapping ErrMalformed", err)
	}
	t.Logf("Next: %v", err)
	if derr.Subject != "c4book.tasks.bad.00" || derr.Sender != "prankster" || derr.Seq != 1 {
		t.Errorf("DecodeError %+v, want subject c4book.tasks.bad.00, sender prankster, seq 1", derr)
	}
	_, err = src.Next(ctx)
	if !errors.As(err, &derr) || !strings.Contains(err.Error(), "published on c4book.tasks.bad.00, not on a lane of c4book.tasks.other") {
		t.Fatalf("Next = %v, want a *DecodeError for a task on another job's subject", err)
	}
	m, err := src.Next(ctx)
	if err != nil || m.Task.JobID != "good" {
		t.Fatalf("Next = %v, %v; want the good task after the bad ones", m, err)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "terminated messages removed", func() bool { return streamMsgs(t, coord, TaskStream) == 0 })
}

func TestConn_Tasks_notReady(t *testing.T) {
	t.Parallel()
	s := startServer(t, ServerOptions{})
	c := connectTo(t, s, "early-worker")
	if _, err := c.Tasks(testCtx(t, 10*time.Second)); !errors.Is(err, ErrNotReady) {
		t.Errorf("Tasks before EnsureStreams = %v, want ErrNotReady", err)
	}
	if err := c.PublishTasks(testCtx(t, 10*time.Second), []Task{testTask(t, "j", 1, 1)}); !errors.Is(err, ErrNotReady) {
		t.Errorf("PublishTasks before EnsureStreams = %v, want ErrNotReady", err)
	}
	if err := c.PublishResult(testCtx(t, 10*time.Second), resultFor(testTask(t, "j", 1, 1), "w")); !errors.Is(err, ErrNotReady) {
		t.Errorf("PublishResult before EnsureStreams = %v, want ErrNotReady", err)
	}
	if _, err := c.Workers(testCtx(t, 10*time.Second)); !errors.Is(err, ErrNotReady) {
		t.Errorf("Workers before EnsureStreams = %v, want ErrNotReady", err)
	}
}

// TestTaskSource_Next_closed: a Next waiting for a task returns ErrClosed
// as soon as its connection is closed, not when its pull request expires
// (pullWait): a worker whose connection is closed stops at once. The
// connection closes once the server holds Next's pull request (before, a
// Next not yet started met a closed connection instead).
func TestTaskSource_Next_closed(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	c := connectTo(t, s, "worker")
	src := taskSource(t, c)
	done := make(chan error, 1)
	go func() {
		_, err := src.Next(context.Background())
		done <- err
	}()
	cons, err := coord.js.Consumer(testCtx(t, 10*time.Second), TaskStream, LaneConsumer(0))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Next waiting for a task", func() bool {
		info, err := cons.Info(testCtx(t, 10*time.Second))
		return err == nil && info.NumWaiting > 0
	})
	closing := time.Now()
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Next on a closed connection = %v, want ErrClosed", err)
		}
		if waited := time.Since(closing); waited >= pullWait/2 {
			t.Errorf("Next returned %v after Close: want at once, not when its pull request of %v expires", waited.Round(time.Millisecond), pullWait)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Next still waiting 30s after Close")
	}
}

// TestTaskSource_Next_serverRestart: a Next waiting for a task when the
// server shuts down, which ends its pull request with "server shutdown",
// waits for the server to come back (on the same store and address) and
// takes a task published then; before, it failed, and a coordinator's
// fetch so failed its job.
func TestTaskSource_Next_serverRestart(t *testing.T) {
	t.Parallel()
	opts := ServerOptions{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Token: "tok"}
	s1, err := StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	url := s1.ClientURL()
	ctx := testCtx(t, 60*time.Second)
	c, err := Connect(ctx, Options{URL: url, Token: "tok", ReconnectWait: 50 * time.Millisecond})
	if err != nil {
		s1.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.EnsureStreams(ctx, testStreams); err != nil {
		s1.Shutdown()
		t.Fatal(err)
	}
	src := taskSource(t, c)
	done := make(chan error, 1)
	var got *TaskMsg
	go func() {
		var err error
		got, err = src.Next(ctx)
		done <- err
	}()
	eventually(t, 30*time.Second, "Next waiting for a task", func() bool {
		info, err := src.cons[0].Info(testCtx(t, 10*time.Second))
		return err == nil && info.NumWaiting > 0
	})
	s1.Shutdown()
	select {
	case err := <-done:
		t.Fatalf("Next with the server shut down = %v, want it waiting", err)
	case <-time.After(time.Second):
	}
	opts.Listen = strings.TrimPrefix(url, "nats://")
	startServer(t, opts)
	eventually(t, 30*time.Second, "reconnected", c.nc.IsConnected)
	task := testTask(t, "j1", 1, 2)
	publishTasks(t, c, task)
	if err := <-done; err != nil {
		t.Fatalf("Next after the restart: %v", err)
	}
	if got.Task.JobID != task.JobID || got.Task.TaskID != task.TaskID {
		t.Errorf("Next = task %s/%d, want %s/%d", got.Task.JobID, got.Task.TaskID, task.JobID, task.TaskID)
	}
}

// TestTaskSource_AckWait_follows: a worker reads the AckWait again, so a
// coordinator that changes it is followed while tasks are being solved.
func TestTaskSource_AckWait_follows(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, StreamConfig{AckWait: 10 * time.Second, MaxDeliver: 5})
	src := taskSource(t, connectTo(t, s, "worker"))
	if aw := src.AckWait(); aw != 10*time.Second {
		t.Fatalf("AckWait = %v, want 10s", aw)
	}
	if err := coord.EnsureStreams(testCtx(t, 10*time.Second), StreamConfig{AckWait: 2 * time.Second, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.readAt = time.Now().Add(-time.Minute) // the last reading is old
	src.mu.Unlock()
	if aw := src.AckWait(); aw != 2*time.Second {
		t.Errorf("AckWait after the change = %v, want 2s", aw)
	}
}

// TestConn_StrandedTasks: a task given up on after MaxDeliver deliveries
// is found in the stream once the consumer is idle, and not before.
func TestConn_StrandedTasks(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, StreamConfig{AckWait: time.Second, MaxDeliver: 1})
	publishTasks(t, coord, testTask(t, "s", 1, 2))
	src := taskSource(t, connectTo(t, s, "worker"))
	m := nextTask(t, src) // held, never acked
	ctx := testCtx(t, 20*time.Second)
	if seqs, idle, err := coord.StrandedTasks(ctx, "s"); err != nil || idle || seqs != nil {
		t.Errorf("with the task in a worker's hands: %v, %v, %v; want not idle", seqs, idle, err)
	}
	// The server gives up on the task when it would deliver it again:
	// while a worker asks.
	eventually(t, 10*time.Second, "the task given up on", func() bool {
		short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		if _, err := src.Next(short); err == nil {
			t.Fatal("the task was delivered again past MaxDeliver")
		}
		seqs, idle, err := coord.StrandedTasks(ctx, "s")
		return err == nil && idle && len(seqs) == 1 && seqs[0] == m.Seq
	})
	if seqs, idle, err := coord.StrandedTasks(ctx, "other"); err != nil || !idle || len(seqs) != 0 {
		t.Errorf("another job: %v, %v, %v; want idle and none", seqs, idle, err)
	}
}

// TestConn_RemoveJob: a finished job's tasks, results and result consumer
// are removed; another job's stay.
func TestConn_RemoveJob(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	ctx := testCtx(t, 10*time.Second)
	for _, job := range []string{"a", "b"} {
		task := testTask(t, job, 1, 2)
		publishTasks(t, c, task)
		if _, err := c.Results(ctx, job); err != nil {
			t.Fatal(err)
		}
		if err := c.PublishResult(ctx, resultFor(task, "w")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.RemoveJob(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, c, TaskStream); n != 1 {
		t.Errorf("task stream holds %d, want b's one", n)
	}
	if n := streamMsgs(t, c, ResultStream); n != 1 {
		t.Errorf("result stream holds %d, want b's one", n)
	}
	rs, _ := c.stream(ctx, ResultStream)
	if _, err := rs.Consumer(ctx, ResultConsumer("a")); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Errorf("a's result consumer: %v, want not found", err)
	}
	if _, err := rs.Consumer(ctx, ResultConsumer("b")); err != nil {
		t.Errorf("b's result consumer: %v", err)
	}
	if err := c.RemoveJob(ctx, "a"); err != nil {
		t.Errorf("removing it again: %v", err)
	}
}
