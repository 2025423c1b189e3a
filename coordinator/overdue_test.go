package coordinator

import (
	"slices"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
)

// TestOverdueWatch: a task is overdue once it has been out of its lane,
// in a worker's hands, longer than ten times the 90th percentile of the
// answer times (at least the floor); a task is known out of its lane once
// a task published after it in its lane was answered, or its lane has no
// task waiting; not while it only waits its turn, however long.
func TestOverdueWatch(t *testing.T) {
	t.Parallel()
	w := newOverdueWatch(6, time.Second) // floor 4 s
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	if got := w.after(); got != 4*time.Second {
		t.Errorf("after() with no answer = %v, want the floor 4s", got)
	}
	busy := make([]uint64, queue.Lanes)
	for l := range busy {
		busy[l] = 1
	}
	// Tasks 0..3 in lane 0, published at 0, 1, 2, 3 s; task 4 in lane 1 at 0 s.
	for i := range 4 {
		w.sent(i, 0, at(float64(i)))
	}
	w.sent(4, 1, at(0))
	// The first answer of a lane is no sample (the lane may have waited
	// for its worker); the next ones are timed from the answer before.
	w.answered(0, at(100))
	if got := w.after(); got != 4*time.Second {
		t.Errorf("after() with a lane's first answer = %v, want the floor 4s", got)
	}
	w.answered(3, at(102)) // 2 s after the answer before: 10 x 2 s = 20 s
	if got := w.after(); got != 20*time.Second {
		t.Errorf("after() = %v, want 20s", got)
	}
	// 1 and 2 were delivered before 3: known out at the first look (110 s),
	// overdue 20 s later. 4, in another lane, waits its turn.
	if got := w.overdue([]int{1, 2, 4}, at(110), busy); len(got) != 0 {
		t.Errorf("overdue at 110 s: %v, want none", got)
	}
	if got := w.overdue([]int{1, 2, 4}, at(129), busy); len(got) != 0 {
		t.Errorf("overdue at 129 s: %v, want none", got)
	}
	if got := w.overdue([]int{1, 2, 4}, at(131), busy); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("overdue at 131 s: %v, want [1 2]", got)
	}
	// Task 4 waits in lane 1 for hours: not overdue...
	if got := w.overdue([]int{4}, at(10000), busy); len(got) != 0 {
		t.Errorf("overdue after hours waiting in its lane: %v, want none", got)
	}
	// ...until its lane has nothing waiting: then it is in a worker's
	// hands, from that look on.
	idle := slices.Clone(busy)
	idle[1] = 0
	if got := w.overdue([]int{4}, at(10001), idle); len(got) != 0 {
		t.Errorf("overdue at the look that finds its lane empty: %v, want none yet", got)
	}
	if got := w.overdue([]int{4}, at(10022), nil); !slices.Equal(got, []int{4}) {
		t.Errorf("overdue 21 s after its lane was found empty: %v, want [4]", got)
	}
	// A copy published again starts afresh, in its new lane.
	w.sent(4, 33, at(10030))
	if got := w.overdue([]int{4}, at(20000), busy); len(got) != 0 {
		t.Errorf("a new copy waiting in its lane: overdue %v, want none", got)
	}
}

// TestOverdueWatch_stragglers: at a job's end a task in a worker's hands
// for longer than three times the 90th percentile of the answer times (at
// least minTailAfter) is a straggler; with no answer timed yet, the
// overdue floor applies.
func TestOverdueWatch_stragglers(t *testing.T) {
	t.Parallel()
	w := newOverdueWatch(4, time.Second) // floor 4 s
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	if got := w.tailAfter(); got != 4*time.Second {
		t.Errorf("tailAfter() with no answer = %v, want the overdue floor 4s", got)
	}
	for i := range 3 {
		w.sent(i, 0, at(0))
	}
	w.sent(3, 1, at(0))
	w.answered(0, at(1))
	w.answered(1, at(1.5)) // 0.5 s: 3 x 0.5 s is under the least, 2 s
	if got := w.tailAfter(); got != minTailAfter {
		t.Errorf("tailAfter() = %v, want the least, %v", got, minTailAfter)
	}
	dry := make([]uint64, queue.Lanes)
	w.overdue([]int{2, 3}, at(10), dry) // both known in a worker's hands from 10 s
	if got := w.stragglers([]int{2, 3}, at(11.9)); len(got) != 0 {
		t.Errorf("stragglers 1.9 s after: %v, want none", got)
	}
	if got := w.stragglers([]int{2, 3}, at(12.1)); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("stragglers 2.1 s after: %v, want [2 3]", got)
	}
	w.answered(2, at(20)) // 18.5 s after the answer before: 3 x 18.5 s = 55.5 s
	if got := w.tailAfter(); got != 55500*time.Millisecond {
		t.Errorf("tailAfter() = %v, want 55.5s", got)
	}
	if got := w.stragglers([]int{3}, at(30)); len(got) != 0 {
		t.Errorf("stragglers 20 s after, slower answers timed: %v, want none", got)
	}
}
