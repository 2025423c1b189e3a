package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// TestPace: one request ahead on a local link, or when tasks take longer
// than a round trip; round trip over solving time over a slow link, at
// most maxReadAhead; the round trip is the least of the recent requests,
// so that one that waited for tasks does not count as the link.
func TestPace(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name    string
		fetches []time.Duration
		solves  []time.Duration
		want    int
	}{
		{"nothing known", nil, nil, 1},
		{"no task solved yet", []time.Duration{200 * ms}, nil, 1},
		{"a local server", []time.Duration{ms}, []time.Duration{ms / 10}, 1},
		{"tasks longer than the link", []time.Duration{200 * ms}, []time.Duration{time.Second}, 1},
		{"30 ms over 10 ms tasks", []time.Duration{30 * ms}, []time.Duration{10 * ms}, 3},
		{"200 ms over 25 ms tasks", []time.Duration{200 * ms}, []time.Duration{25 * ms}, 8},
		{"at most maxReadAhead", []time.Duration{10 * time.Second}, []time.Duration{ms}, maxReadAhead},
		{"a request that waited is not the link", []time.Duration{30 * time.Second, 30 * ms, 5 * time.Second}, []time.Duration{10 * ms}, 3},
	}
	for _, tc := range cases {
		var p pace
		for _, d := range tc.fetches {
			p.fetched(d)
		}
		for _, d := range tc.solves {
			p.solved(d)
		}
		if got := p.ahead(); got != tc.want {
			t.Errorf("%s: ahead %d, want %d", tc.name, got, tc.want)
		}
	}
	// The oldest requests leave the ring.
	var p pace
	p.fetched(30 * time.Millisecond)
	for range fetchSamples {
		p.fetched(300 * time.Millisecond)
	}
	p.solved(100 * time.Millisecond)
	if got := p.ahead(); got != 3 {
		t.Errorf("after %d slower requests: ahead %d, want 3 (300 ms over 100 ms)", fetchSamples, got)
	}
}

// slowTasks hands out its messages, each taken at once and handed over
// after a delay (a slow link's round trip), and counts the requests out at
// once.
type slowTasks struct {
	fakeTasks
	delay     time.Duration
	out, most atomic.Int32
}

func (s *slowTasks) Next(ctx context.Context) (*queue.TaskMsg, error) {
	n := s.out.Add(1)
	defer s.out.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	m, err := s.fakeTasks.Next(ctx)
	if err == nil {
		time.Sleep(s.delay) // on its way, whatever becomes of the requester
	}
	return m, err
}

// quickTasks returns n tasks of one 5x4 position each, solved in
// microseconds, each handed over after delay, and their replies.
func quickTasks(tb testing.TB, n int, delay time.Duration) (*slowTasks, []*replies) {
	b := solver.MustBoard(5, 4)
	tasks := &slowTasks{fakeTasks: fakeTasks{msgs: make(chan *queue.TaskMsg, n)}, delay: delay}
	reps := make([]*replies, n)
	for i := range n {
		reps[i] = &replies{}
		task := queue.Task{JobID: "j", TaskID: uint64(i + 1), Width: 5, Height: 4, Keys: keysOf(tb, b, "1234512345")}
		tasks.msgs <- queue.NewTaskMsg(task, uint64(i+1), 1, reps[i])
	}
	return tasks, reps
}

// TestRun_readAhead: over a slow link, with tasks solved in far less than
// its round trip, one thread keeps several requests out, and every task is
// solved once, whichever request brought it (the last task, brought by the
// last request out while the first waits for one that will never come,
// is solved too).
func TestRun_readAhead(t *testing.T) {
	const n = 40
	tasks, reps := quickTasks(t, n, 40*time.Millisecond)
	pub := &fakePublisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Run(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20}) }()
	acked := func() int {
		sum := 0
		for _, r := range reps {
			sum += r.read(func(r *replies) int { return r.acked })
		}
		return sum
	}
	waitUntil(t, "every task solved", func() bool { return acked() == n })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if most := tasks.most.Load(); most < 3 {
		t.Errorf("at most %d requests out at once over a 40 ms link with tasks of microseconds: want several", most)
	}
	for i, r := range reps {
		if a := r.read(func(r *replies) int { return r.acked }); a != 1 {
			t.Errorf("task %d acked %d times", i+1, a)
		}
	}
}

// TestRun_readAheadStopped: a worker stopped with requests out hands back
// every task they brought: each task is solved, handed back or never
// taken, none held.
func TestRun_readAheadStopped(t *testing.T) {
	const n = 200
	tasks, reps := quickTasks(t, n, 20*time.Millisecond)
	count := func(what func(r *replies) int) int {
		sum := 0
		for _, r := range reps {
			sum += r.read(what)
		}
		return sum
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Run(ctx, tasks, &fakePublisher{}, Config{ID: "w", Concurrency: 2, TableBytes: 1 << 20})
	}()
	waitUntil(t, "20 tasks solved", func() bool { return count(func(r *replies) int { return r.acked }) >= 20 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	acked, naked := count(func(r *replies) int { return r.acked }), count(func(r *replies) int { return r.naked })
	if naked == 0 {
		t.Error("no task handed back: the test stopped no request that had brought one")
	}
	if acked+naked+len(tasks.msgs) != n {
		t.Errorf("%d solved, %d handed back, %d never taken: %d tasks held, of %d", acked, naked, len(tasks.msgs), n-acked-naked-len(tasks.msgs), n)
	}
	for i, r := range reps {
		if r.read(func(r *replies) int { return r.acked + r.naked }) > 1 {
			t.Errorf("task %d both solved and handed back, or twice", i+1)
		}
	}
}
