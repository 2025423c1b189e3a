package worker

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

func TestParseHours(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 12, 2, h, m, 0, 0, time.Local) }
	for _, tc := range []struct {
		s        string
		in, out  []time.Time
		hasError bool
	}{
		{s: "09:00-17:00", in: []time.Time{day(9, 0), day(12, 30), day(16, 59)}, out: []time.Time{day(8, 59), day(17, 0), day(23, 0)}},
		{s: "22:00-07:00", in: []time.Time{day(22, 0), day(23, 59), day(0, 0), day(6, 59)}, out: []time.Time{day(7, 0), day(12, 0), day(21, 59)}},
		{s: "09:00-09:00", hasError: true},
		{s: "9-17", hasError: true},
		{s: "24:00-07:00", hasError: true},
		{s: "22:60-07:00", hasError: true},
		{s: "22:00", hasError: true},
		{s: "", hasError: true},
	} {
		h, err := ParseHours(tc.s)
		if tc.hasError {
			if err == nil {
				t.Errorf("ParseHours(%q) = %+v, want an error", tc.s, h)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseHours(%q): %v", tc.s, err)
		}
		for _, at := range tc.in {
			if closed, why := h.Closed(at); closed {
				t.Errorf("%s at %s: closed (%s)", tc.s, at.Format("15:04"), why)
			}
		}
		for _, at := range tc.out {
			if closed, why := h.Closed(at); !closed || why != "outside the hours "+tc.s {
				t.Errorf("%s at %s: closed %v, %q", tc.s, at.Format("15:04"), closed, why)
			}
		}
	}
}

// TestBusy: the gate closes once the others' share has stayed above the
// limit for the hold time, not at a short burst, and opens once it has
// stayed below as long; this process's own CPU never counts.
func TestBusy(t *testing.T) {
	var now time.Time
	var cur cpuTimes
	// tick advances the clock a second, the machine's 2 CPUs by 200
	// ticks of which busy by others and by this process.
	tick := func(others, own uint64) {
		now = now.Add(time.Second)
		cur.total += 200
		cur.idle += 200 - others - own
		cur.own += own
	}
	b := &Busy{Above: 0.5, Hold: 3 * time.Second, read: func() (cpuTimes, error) { return cur, nil }}
	ask := func() bool { closed, _ := b.Closed(now); return closed }
	ask() // the first reading
	steps := []struct {
		others, own uint64
		want        bool
	}{
		{20, 180, false}, // this process keeps the machine busy: no matter
		{180, 0, false},  // a burst
		{20, 0, false},
		{180, 0, false}, // busy from here
		{180, 0, false},
		{180, 0, false},
		{180, 0, true}, // for 3 s: closed
		{20, 0, true},  // quiet from here
		{20, 0, true},
		{20, 0, true},
		{20, 0, false}, // for 3 s: open
	}
	for i, s := range steps {
		tick(s.others, s.own)
		if got := ask(); got != s.want {
			t.Fatalf("step %d (others %d, own %d of 200): closed %v, want %v", i, s.others, s.own, got, s.want)
		}
	}
	for range 4 { // busy again, for 3 s from the first reading of it
		tick(190, 0)
		ask()
	}
	if closed, why := b.Closed(now); !closed || !strings.Contains(why, "other programs use 95% of its CPUs (the limit is 50%") {
		t.Errorf("closed %v, %q", closed, why)
	}
}

// TestParseCPUTimes: the machine's times from /proc/stat's first line,
// the process's from its stat, whose command name may hold spaces and
// parentheses.
func TestParseCPUTimes(t *testing.T) {
	stat := "cpu  100 5 50 800 20 1 2 3 7 0\ncpu0 50 2 25 400 10 0 1 1 3 0\n"
	self := "4242 (c4book (w 1)) S 1 4242 4242 0 -1 4194560 100 0 0 0 31 9 0 0 20 0 12 0 100 2000000 500 1844\n"
	got, err := parseCPUTimes(stat, self)
	if err != nil {
		t.Fatal(err)
	}
	if want := (cpuTimes{total: 100 + 5 + 50 + 800 + 20 + 1 + 2 + 3, idle: 820, own: 40}); got != want {
		t.Errorf("parseCPUTimes = %+v, want %+v", got, want)
	}
	for _, bad := range [][2]string{{"intr 1 2\n", self}, {stat, "4242 (x) S 1"}, {"cpu 1 2 x 4 5\n", self}} {
		if _, err := parseCPUTimes(bad[0], bad[1]); err == nil {
			t.Errorf("parseCPUTimes(%q, %q): no error", bad[0], bad[1])
		}
	}
	if _, err := readCPUTimes(); err != nil {
		t.Logf("this machine's /proc: %v (the gate stays open there)", err)
	}
}

// switchGate is a gate a test opens and closes.
type switchGate struct{ closed atomic.Bool }

func (g *switchGate) Closed(time.Time) (bool, string) {
	if g.closed.Load() {
		return true, "told so"
	}
	return false, ""
}

// TestRunGated: a worker whose gate closes hands its task back at once,
// says in its status that it is paused and why, takes nothing while
// paused, and takes tasks again once the gate opens.
func TestRunGated(t *testing.T) {
	defer func(d time.Duration) { gatePoll = d }(gatePoll)
	gatePoll = 10 * time.Millisecond
	long := queue.Task{JobID: "j", TaskID: 1, Width: 7, Height: 6, Keys: keysOf(t, solver.Standard, "")} // minutes
	short := queue.Task{JobID: "j", TaskID: 2, Width: 5, Height: 4, Keys: keysOf(t, solver.MustBoard(5, 4), "33")}
	tasks := &fakeTasks{msgs: make(chan *queue.TaskMsg, 2)}
	rLong, rShort := &replies{}, &replies{}
	tasks.msgs <- queue.NewTaskMsg(long, 1, 1, rLong)
	pub := &statusPublisher{}
	gate := &switchGate{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var counts Counters
	go func() {
		done <- RunGated(ctx, tasks, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20, Heartbeat: 20 * time.Millisecond,
			StatusEvery: 20 * time.Millisecond, Counters: &counts}, gate)
	}()
	waitUntil(t, "the long task being solved", func() bool { return rLong.read(func(r *replies) int { return r.inProgress }) > 0 })
	gate.closed.Store(true)
	waitUntil(t, "the long task handed back", func() bool { return rLong.read(func(r *replies) int { return r.naked }) == 1 })
	waitUntil(t, "a status saying paused", func() bool {
		s := pub.reported()
		return len(s) > 0 && s[len(s)-1].Paused == "told so"
	})
	tasks.msgs <- queue.NewTaskMsg(short, 1, 1, rShort)
	time.Sleep(100 * time.Millisecond)
	if rShort.read(func(r *replies) int { return r.inProgress + r.acked }) != 0 {
		t.Fatal("a paused worker took a task")
	}
	gate.closed.Store(false)
	waitUntil(t, "the short task solved once resumed", func() bool { return rShort.read(func(r *replies) int { return r.acked }) == 1 })
	waitUntil(t, "a status at work again", func() bool {
		s := pub.reported()
		return s[len(s)-1].Paused == "" && s[len(s)-1].Tasks == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if counts.HandedBack.Load() != 1 || counts.Tasks.Load() != 1 || rLong.acked != 0 {
		t.Errorf("handed back %d, tasks %d, long acked %d", counts.HandedBack.Load(), counts.Tasks.Load(), rLong.acked)
	}
}

// TestRunGated_statusRetried: a worker paused before any coordinator made
// the status bucket (its puts fail) stores its status at its next poll
// once it can, not a whole status period later.
func TestRunGated_statusRetried(t *testing.T) {
	defer func(d time.Duration) { gatePoll = d }(gatePoll)
	gatePoll = 10 * time.Millisecond
	pub := &statusPublisher{failFirst: 3}
	gate := &switchGate{}
	gate.closed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- RunGated(ctx, &fakeTasks{msgs: make(chan *queue.TaskMsg)}, pub, Config{ID: "w", Concurrency: 1, TableBytes: 1 << 20,
			StatusEvery: time.Hour, Counters: &Counters{}}, gate)
	}()
	waitUntil(t, "a status saying paused after three failed puts", func() bool {
		s := pub.reported()
		return len(s) > 0 && s[0].Paused == "told so"
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
