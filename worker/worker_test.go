package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// replies records the replies to one task message.
type replies struct {
	mu                   sync.Mutex
	acked, naked, termed int
	inProgress           int
}

func (r *replies) InProgress() error             { r.mu.Lock(); r.inProgress++; r.mu.Unlock(); return nil }
func (r *replies) Ack(ctx context.Context) error { r.mu.Lock(); r.acked++; r.mu.Unlock(); return nil }
func (r *replies) Nak(time.Duration) error       { r.mu.Lock(); r.naked++; r.mu.Unlock(); return nil }
func (r *replies) Term() error                   { r.mu.Lock(); r.termed++; r.mu.Unlock(); return nil }

var _ queue.Replier = (*replies)(nil)

// read returns what count reads of r, under its lock.
func (r *replies) read(count func(r *replies) int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return count(r)
}

// waitUntil polls cond until it holds, failing the test after 30 seconds.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited 30s in vain for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeTasks hands out its messages, then blocks until ctx is done.
type fakeTasks struct{ msgs chan *queue.TaskMsg }

func (f *fakeTasks) Next(ctx context.Context) (*queue.TaskMsg, error) {
	select {
	case m := <-f.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fakePublisher records results.
type fakePublisher struct {
	mu      sync.Mutex
	results []queue.Result
}

func (f *fakePublisher) PublishResult(ctx context.Context, r queue.Result) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, r)
	return nil
}
func (f *fakePublisher) PutWorkerStatus(context.Context, queue.WorkerStatus) error { return nil }
func (f *fakePublisher) RemoveWorkerStatus(context.Context, string) error          { return nil }

func keysOf(tb testing.TB, b *solver.Board, moves ...string) []uint64 {
	var keys []uint64
	for _, m := range moves {
		p, err := b.Parse(m)
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, p.Key())
	}
	return keys
}

func TestRun_tasks(t *testing.T) {
	b := solver.MustBoard(5, 4)
	over, _ := b.Parse("1212121")
	good := queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "33", "3344", "12")}
	cases := []struct {
		name string
		task queue.Task
		ok   bool
	}{
		{"good", good, true},
		{"no such board", queue.Task{JobID: "j", TaskID: 2, Width: 12, Height: 12, Keys: good.Keys}, false},
		{"not a position", queue.Task{JobID: "j", TaskID: 3, Width: 5, Height: 4, Keys: []uint64{0b11111}}, false},
		{"game over", queue.Task{JobID: "j", TaskID: 4, Width: 5, Height: 4, Keys: []uint64{over.Key()}}, false},
	}
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, len(cases))}
	rs := make([]*replies, len(cases))
	for i, tc := range cases {
		rs[i] = &replies{}
		tasks.msgs <- queue.NewTaskMsg(tc.task, uint64(i+1), 1, rs[i])
	}
	pub := &fakePublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var counts Counters
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 2, TableBytes: 1 << 20, Counters: &counts})
	}()
	waitUntil(t, "every message to get its reply", func() bool {
		n := 0
		for _, r := range rs {
			n += r.read(func(r *replies) int { return r.acked + r.termed + r.naked })
		}
		return n == len(cases)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		r := rs[i]
		if tc.ok && (r.acked != 1 || r.termed != 0) || !tc.ok && (r.termed != 1 || r.acked != 0) {
			t.Errorf("%s: acked %d, terminated %d", tc.name, r.acked, r.termed)
		}
	}
	if len(pub.results) != 1 {
		t.Fatalf("%d results published, want 1", len(pub.results))
	}
	res := pub.results[0]
	s, _ := solver.New(b, 1<<20)
	for i, k := range good.Keys {
		p, _ := b.PositionFromKey(k)
		if int(res.Scores[i]) != s.Solve(p) || res.Keys[i] != k {
			t.Errorf("position %d: score %d, want %d", i, res.Scores[i], s.Solve(p))
		}
	}
	if res.WorkerID != "w" || res.TaskID != 1 || res.Nodes == 0 {
		t.Errorf("result %+v", res)
	}
	// The counters hold the good task alone: malformed ones are neither
	// solved nor handed back.
	if c := &counts; c.Tasks.Load() != 1 || c.Solved.Load() != 3 || c.Nodes.Load() != res.Nodes || c.HandedBack.Load() != 0 || c.Busy.Load() != 0 {
		t.Errorf("counters: tasks %d, solved %d, nodes %d (result %d), handed back %d, busy %d",
			c.Tasks.Load(), c.Solved.Load(), c.Nodes.Load(), res.Nodes, c.HandedBack.Load(), c.Busy.Load())
	}
}

// TestRun_interrupted: a task being solved when the worker is stopped is
// handed back, not acked, and nothing is published.
func TestRun_interrupted(t *testing.T) {
	b := solver.Standard
	// The empty board takes minutes.
	task := queue.Task{JobID: "j", TaskID: 1, Width: 7, Height: 6, Keys: keysOf(t, b, "")}
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
	r := &replies{}
	tasks.msgs <- queue.NewTaskMsg(task, 1, 1, r)
	pub := &fakePublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var counts Counters
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Heartbeat: 20 * time.Millisecond, Counters: &counts})
	}()
	waitUntil(t, "a progress report: the task being solved", func() bool {
		return r.read(func(r *replies) int { return r.inProgress }) > 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.naked != 1 || r.acked != 0 || len(pub.results) != 0 {
		t.Errorf("naked %d, acked %d, %d results", r.naked, r.acked, len(pub.results))
	}
	if counts.HandedBack.Load() != 1 || counts.Tasks.Load() != 0 || counts.Busy.Load() != 0 {
		t.Errorf("counters: handed back %d, tasks %d, busy %d", counts.HandedBack.Load(), counts.Tasks.Load(), counts.Busy.Load())
	}
}

// TestRun_solverPanic: a task on which the solver panics is handed back
// (to be delivered again, and given up on after MaxDeliver deliveries),
// the worker goes on with the next task, and its solver is made anew.
func TestRun_solverPanic(t *testing.T) {
	b := solver.MustBoard(5, 4)
	poison := keysOf(t, b, "3344")
	beforeSolve = func(p solver.Position) {
		if p.Key() == poison[0] {
			panic("solver crash")
		}
	}
	defer func() { beforeSolve = nil }()
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 2)}
	bad, good := &replies{}, &replies{}
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: poison}, 1, 1, bad)
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 2, Width: 5, Height: 4, Keys: keysOf(t, b, "33", "12")}, 2, 1, good)
	pub := &fakePublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20}) }()
	waitUntil(t, "the good task acked", func() bool {
		return good.read(func(r *replies) int { return r.acked }) > 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if bad.naked != 1 || bad.acked != 0 || good.acked != 1 || len(pub.results) != 1 || pub.results[0].TaskID != 2 {
		t.Errorf("poison: naked %d, acked %d; good acked %d; results %d", bad.naked, bad.acked, good.acked, len(pub.results))
	}
}

// TestWorker_help: a thread with no task helps a busy one with its
// position, and leaves when its context is done.
func TestWorker_help(t *testing.T) {
	tab, err := solver.NewTable(solver.Standard, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	busy, idle := &thread{index: 0}, &thread{index: 1}
	w := &worker{threads: []*thread{busy, idle}, wake: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	helping := make(chan struct{})
	go func() {
		defer close(helping)
		w.help(ctx, idle)
	}()

	leader := solver.NewShared(tab)
	p, _ := solver.Standard.Parse("2416615552")
	const want = 4
	alone := leader.Solve(p)
	nodesAlone := leader.Nodes()
	if alone != want {
		t.Fatalf("Solve alone = %d, want %d", alone, want)
	}
	leader.OpenTeam()
	busy.busy.Store(leader)
	w.wakeHelpers()
	helped := false
	for try := 0; try < 200 && !helped; try++ {
		tab.Clear()
		leader.ResetNodes()
		if got := leader.Solve(p); got != want {
			t.Fatalf("Solve helped = %d, want %d", got, want)
		}
		// The helper's nodes count in the leader's: a count other than
		// the deterministic one of a solve alone says it took part.
		helped = leader.Nodes() != nodesAlone
		time.Sleep(time.Millisecond)
	}
	if !helped {
		t.Error("the idle thread never helped the busy one")
	}
	busy.busy.Store(nil)
	leader.CloseTeam()
	cancel()
	select {
	case <-helping:
	case <-time.After(10 * time.Second):
		t.Fatal("help did not return when its context was done")
	}
}

// stallingPublisher's PublishResult signals entered, then waits for ctx
// to be done and fails with its error, as a publication cut short by
// Ctrl-C does; with fail set it fails at once instead, as a server that
// does not answer makes it.
type stallingPublisher struct {
	fakePublisher
	entered chan struct{}
	fail    error
}

func (p *stallingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	close(p.entered)
	if p.fail != nil {
		return p.fail
	}
	<-ctx.Done()
	return fmt.Errorf("nats: publishing: %w", ctx.Err())
}

// stallingAck is a replier whose Ack signals entered, then waits for ctx
// to be done and fails with its error.
type stallingAck struct {
	*replies
	entered chan struct{}
}

func (r stallingAck) Ack(ctx context.Context) error {
	close(r.entered)
	<-ctx.Done()
	return fmt.Errorf("nats: acking: %w", ctx.Err())
}

// TestRun_stopLogs: a worker stopped while it publishes a result or acks
// a task logs no warning (the failure is its own cancellation's), and
// hands the unpublished task back; a publication that fails on its own
// is still a warning.
func TestRun_stopLogs(t *testing.T) {
	defer func(d time.Duration) { deliverGrace = d }(deliverGrace)
	deliverGrace = 50 * time.Millisecond
	b := solver.MustBoard(5, 4)
	task := queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "33", "12")}
	cases := []struct {
		name   string
		fail   error // of PublishResult, at once
		ack    bool  // Ack stalls, not PublishResult
		cancel bool  // the worker is stopped while it stalls
		warn   string
		debug  string
	}{
		{name: "stopped while publishing", cancel: true, debug: "publishing a result: task handed back"},
		{name: "stopped while acking", ack: true, cancel: true, debug: "acking a task"},
		{name: "publishing fails", fail: errors.New("nats: no responders available for request"), warn: "publishing a result: task handed back"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entered := make(chan struct{})
			var pub Publisher = &stallingPublisher{entered: entered, fail: c.fail}
			r := &replies{}
			var replier queue.Replier = r
			if c.ack {
				pub, replier = &fakePublisher{}, stallingAck{replies: r, entered: entered}
			}
			tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
			tasks.msgs <- queue.NewTaskMsg(task, 1, 1, replier)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error)
			go func() { done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Log: log}) }()
			<-entered
			if !c.cancel {
				waitUntil(t, "the task handed back", func() bool {
					return r.read(func(r *replies) int { return r.naked }) > 0
				})
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got := logs.String()
			warnings := 0
			for line := range strings.Lines(got) {
				if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
					warnings++
					if c.warn == "" || !strings.Contains(line, c.warn) {
						t.Errorf("unexpected warning: %s", line)
					}
				}
			}
			if c.warn != "" && warnings != 1 {
				t.Errorf("%d warnings, want one %q:\n%s", warnings, c.warn, got)
			}
			if c.debug != "" && !strings.Contains(got, "level=DEBUG msg=\""+c.debug+"\"") {
				t.Errorf("no debug line %q:\n%s", c.debug, got)
			}
			// An unpublished result's task goes back; a published one's is
			// not acked, and comes again to make a duplicate result.
			if wantNak := !c.ack; (r.naked == 1) != wantNak || r.acked != 0 {
				t.Errorf("naked %d, acked %d", r.naked, r.acked)
			}
		})
	}
}

// flakyTasks fails its first fails calls to Next with err, then hands out
// the messages of fakeTasks.
type flakyTasks struct {
	fakeTasks
	mu    sync.Mutex
	fails int
	err   error
}

func (f *flakyTasks) Next(ctx context.Context) (*queue.TaskMsg, error) {
	f.mu.Lock()
	if f.fails != 0 {
		f.fails--
		f.mu.Unlock()
		return nil, f.err
	}
	f.mu.Unlock()
	return f.fakeTasks.Next(ctx)
}

// TestRun_taskSourceFails: a task source that fails (the consumer gone
// while a server starts again without its store) is waited out: the
// worker says once what it waits for, takes the task once the source
// works again, and with IdleExit leaves after that long without a task.
// A closed connection stops it.
func TestRun_taskSourceFails(t *testing.T) {
	saved := taskBackoff
	taskBackoff.First, taskBackoff.Max = time.Millisecond, 4*time.Millisecond
	defer func() { taskBackoff = saved }()
	notReady := fmt.Errorf("queue: next task: %w", queue.ErrNotReady)

	t.Run("comes back", func(t *testing.T) {
		b := solver.MustBoard(5, 4)
		tasks := &flakyTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}, fails: 20, err: notReady}
		r := &replies{}
		tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "33")}, 1, 1, r)
		var logs bytes.Buffer
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error)
		go func() {
			done <- Run(ctx, tasks, &fakePublisher{}, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Log: log})
		}()
		waitUntil(t, "the task acked", func() bool {
			return r.read(func(r *replies) int { return r.acked }) > 0
		})
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := logs.String()
		mu.Unlock()
		if n := strings.Count(got, `msg="waiting for the task queue"`); n != 1 {
			t.Errorf("%d lines saying it waits for the task queue, want 1 (at most one a minute):\n%s", n, got)
		}
		if !strings.Contains(got, `msg="waited for the task queue"`) || strings.Contains(got, "taking a task") {
			t.Errorf("want a line saying how long it waited, and no warning per failure:\n%s", got)
		}
	})
	t.Run("closed", func(t *testing.T) {
		// A connection closed under the worker does not come back: Run
		// stops and says why, instead of waiting forever.
		closed := fmt.Errorf("queue: next task: %w", queue.ErrClosed)
		tasks := &flakyTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg)}, fails: -1, err: closed}
		err := Run(context.Background(), tasks, &fakePublisher{}, Config{ID: "w", Concurrency: 2, TableBytes: 1 << 20})
		if !errors.Is(err, queue.ErrClosed) {
			t.Fatalf("Run = %v, want queue.ErrClosed", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		tasks := &flakyTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg)}, fails: -1, err: notReady}
		err := Run(context.Background(), tasks, &fakePublisher{}, Config{ID: "w", Concurrency: 2, TableBytes: 1 << 20, IdleExit: 200 * time.Millisecond})
		if err != nil {
			t.Fatalf("Run = %v, want nil: it leaves when idle", err)
		}
	})
}

// lockedWriter serializes the writes of a log shared by goroutines.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// statusPublisher records the statuses a worker stores.
type statusPublisher struct {
	fakePublisher
	smu       sync.Mutex
	statuses  []queue.WorkerStatus
	failFirst int // this many puts fail first, as before a coordinator made the bucket
}

func (p *statusPublisher) PutWorkerStatus(_ context.Context, s queue.WorkerStatus) error {
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.failFirst > 0 {
		p.failFirst--
		return errors.New("bucket not found")
	}
	p.statuses = append(p.statuses, s)
	return nil
}

// reported returns the statuses stored so far.
func (p *statusPublisher) reported() []queue.WorkerStatus {
	p.smu.Lock()
	defer p.smu.Unlock()
	return append([]queue.WorkerStatus(nil), p.statuses...)
}

// TestDefaultStatusEvery: a worker reports at least four times within the
// time its status is kept, so that one report lost, or two, do not make it
// look gone.
func TestDefaultStatusEvery(t *testing.T) {
	if 4*DefaultStatusEvery > queue.WorkerStatusTTL {
		t.Errorf("DefaultStatusEvery %v: a worker reports fewer than four times in queue.WorkerStatusTTL (%v)", DefaultStatusEvery, queue.WorkerStatusTTL)
	}
}

// TestRun_statusBusy: a worker that solved a task between two status
// reports says it is busy in the second, though the task, a matter of
// microseconds, was over when it reported; once idle for a whole interval
// it says it is not.
func TestRun_statusBusy(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
	pub := &statusPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, StatusEvery: 20 * time.Millisecond})
	}()
	// The first status is stored as the worker starts, with no task.
	for len(pub.reported()) == 0 {
		time.Sleep(time.Millisecond)
	}
	r := &replies{}
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "3344")}, 1, 1, r)
	for {
		r.mu.Lock()
		acked := r.acked
		r.mu.Unlock()
		if acked > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	after := len(pub.reported())
	for len(pub.reported()) < after+2 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := pub.reported()
	busy := false
	for _, s := range got[1:] {
		busy = busy || s.Busy && s.Tasks <= 1 && s.JobID == "j"
	}
	if !busy {
		t.Errorf("no status after the task says busy: %+v", got)
	}
	if last := got[len(got)-1]; last.Busy || last.Tasks != 1 || last.Solved != 1 {
		t.Errorf("last status %+v, want not busy, one task, one position", last)
	}
}

// TestRun_statusBusyAtOnce: a worker whose status says idle reports as
// soon as it takes a task, not at its next tick.
func TestRun_statusBusyAtOnce(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
	pub := &statusPublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, StatusEvery: time.Hour})
	}()
	for len(pub.reported()) == 0 {
		time.Sleep(time.Millisecond)
	}
	if s := pub.reported()[0]; s.Busy {
		t.Fatalf("first status %+v, want not busy: no task yet", s)
	}
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "3344")}, 1, 1, &replies{})
	deadline := time.Now().Add(10 * time.Second)
	for len(pub.reported()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no status after the task was taken, 10 s on (the next tick is an hour away)")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := pub.reported()[1]; !s.Busy || s.JobID != "j" {
		t.Errorf("second status %+v, want busy on job j", s)
	}
}

// TestRun_statusFirstTaskAtOnce: a worker whose status counts no task
// done reports as soon as it finishes one, not at its next tick (c4book
// status showed "SOLVED 0 TASKS 0" for up to 15 s while the job counted
// thousands of results).
func TestRun_statusFirstTaskAtOnce(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
	pub := &gatedPublisher{gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, StatusEvery: time.Hour})
	}()
	waitFor := func(what string, cond func(queue.WorkerStatus) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.ContainsFunc(pub.reported(), cond) {
			if time.Now().After(deadline) {
				t.Fatalf("no status %s, 10 s on (the next tick is an hour away): %+v", what, pub.reported())
			}
			time.Sleep(time.Millisecond)
		}
	}
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "3344")}, 1, 1, &replies{})
	// The result waits at the gate: the status of the task taken counts
	// none done.
	waitFor("busy with no task done", func(s queue.WorkerStatus) bool { return s.Busy && s.Tasks == 0 })
	close(pub.gate)
	waitFor("with the task done", func(s queue.WorkerStatus) bool { return s.Tasks == 1 && s.Solved == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// gatedPublisher's PublishResult waits for its gate to open (or ctx to be
// done), then records the result; it records the statuses too.
type gatedPublisher struct {
	statusPublisher
	gate chan struct{}
}

func (p *gatedPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	select {
	case <-p.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return p.statusPublisher.PublishResult(ctx, r)
}

// countingTasks is fakeTasks that counts the calls to Next, each of which
// takes at least roundTrip (a link).
type countingTasks struct {
	fakeTasks
	roundTrip time.Duration
	mu        sync.Mutex
	calls     int
}

func (f *countingTasks) Next(ctx context.Context) (*queue.TaskMsg, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	time.Sleep(f.roundTrip)
	return f.fakeTasks.Next(ctx)
}

// TestRun_pipeline: over a slow link (a round trip longer than a task's
// solving), a thread does not wait for the server between tasks. While a
// task's result waits to be published (here, behind a gate), the thread
// has taken and solved the next tasks; it asks for the next task as it
// starts on one, and keeps the tasks it holds alive; the results all go
// out once the server answers.
func TestRun_pipeline(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &countingTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg, 3)}, roundTrip: 100 * time.Millisecond}
	rs := []*replies{{}, {}, {}}
	for i, moves := range []string{"33", "12", "3344"} {
		tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: uint64(i + 1), Width: 5, Height: 4, Keys: keysOf(t, b, moves)}, uint64(i+1), 1, rs[i])
	}
	pub := &gatedPublisher{gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Heartbeat: 10 * time.Millisecond})
	}()
	// With the first result held at the gate, the thread goes on: its
	// two deliveries in flight hold tasks 1 and 2, and it has taken task 3
	// and asked for a fourth.
	waitUntil(t, "every task taken and a fourth asked for", func() bool {
		tasks.mu.Lock()
		defer tasks.mu.Unlock()
		return tasks.calls == 4
	})
	waitUntil(t, "the tasks held kept alive", func() bool {
		return rs[0].read(func(r *replies) int { return r.inProgress }) > 0 && rs[2].read(func(r *replies) int { return r.inProgress }) > 0
	})
	if n := rs[0].read(func(r *replies) int { return r.acked }); n != 0 {
		t.Fatalf("task 1 acked %d times before its result was published", n)
	}
	close(pub.gate)
	waitUntil(t, "every task acked", func() bool {
		n := 0
		for _, r := range rs {
			n += r.read(func(r *replies) int { return r.acked })
		}
		return n == 3
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(pub.results) != 3 {
		t.Errorf("%d results, want 3", len(pub.results))
	}
}

// TestRun_deliverAfterStop: a task solved when the worker is stopped is
// still delivered, for up to deliverGrace: its result is not thrown away.
func TestRun_deliverAfterStop(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 1)}
	r := &replies{}
	tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: 1, Width: 5, Height: 4, Keys: keysOf(t, b, "33")}, 1, 1, r)
	pub := &gatedPublisher{gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var counts Counters
	go func() {
		done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Counters: &counts})
	}()
	waitUntil(t, "the task solved", func() bool { return counts.Busy.Load() == 0 && len(tasks.msgs) == 0 })
	time.Sleep(50 * time.Millisecond) // its delivery waits at the gate
	cancel()
	time.Sleep(50 * time.Millisecond)
	close(pub.gate) // the server answers, within deliverGrace
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(pub.results) != 1 || r.acked != 1 || r.naked != 0 || counts.Tasks.Load() != 1 {
		t.Errorf("results %d, acked %d, naked %d, tasks %d; want the solved task delivered", len(pub.results), r.acked, r.naked, counts.Tasks.Load())
	}
}

// TestRun_slowHoldsNothingAhead: a thread whose tasks take much longer
// than a round trip (a machine its owner is using) asks for its next task
// only once it has solved one: it holds no task it is not at, which at a
// job's end would wait for it (or take the copy meant for an idle worker).
func TestRun_slowHoldsNothingAhead(t *testing.T) {
	b := solver.MustBoard(5, 4)
	tasks := &countingTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg, 3)}}
	rs := []*replies{{}, {}, {}}
	for i, moves := range []string{"33", "12", "3344"} {
		tasks.msgs <- queue.NewTaskMsg(queue.Task{JobID: "j", TaskID: uint64(i + 1), Width: 5, Height: 4, Keys: keysOf(t, b, moves)}, uint64(i+1), 1, rs[i])
	}
	last := keysOf(t, b, "3344")[0]
	callsAtLast := make(chan int, 1)
	beforeSolve = func(p solver.Position) {
		time.Sleep(30 * time.Millisecond) // a slow machine
		if p.Key() == last {
			tasks.mu.Lock()
			callsAtLast <- tasks.calls
			tasks.mu.Unlock()
		}
	}
	defer func() { beforeSolve = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, &fakePublisher{}, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20})
	}()
	select {
	case n := <-callsAtLast:
		if n != 3 {
			t.Errorf("%d requests for tasks while the third was being solved, want 3: none ahead", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the third task was never solved")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
