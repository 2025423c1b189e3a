package coordinator

import (
	"slices"
	"testing"
	"time"
)

// TestOverdueWatch: a task is overdue once it is out longer than ten
// times the 90th percentile of the answer times (at least the floor) and a
// task published after it was answered; not while it only waits its turn.
func TestOverdueWatch(t *testing.T) {
	t.Parallel()
	w := newOverdueWatch(4, time.Second) // floor 4 s
	t0 := time.Unix(1000, 0)
	if got := w.after(); got != 4*time.Second {
		t.Errorf("after() with no answer = %v, want the floor 4s", got)
	}
	for i := range 4 {
		w.sent(i, t0.Add(time.Duration(i)*time.Second))
	}
	// Task 3, the last published, answered 1 s after: 10 x 1 s = 10 s.
	w.answered(3, t0.Add(4*time.Second))
	if got := w.after(); got != 10*time.Second {
		t.Errorf("after() = %v, want 10s", got)
	}
	if got := w.overdue([]int{0, 1, 2}, t0.Add(9*time.Second), false); len(got) != 0 {
		t.Errorf("overdue at 9 s: %v, want none", got)
	}
	if got := w.overdue([]int{0, 1, 2}, t0.Add(11500*time.Millisecond), false); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("overdue at 11.5 s: %v, want [0 1] (2 was sent at 2 s)", got)
	}
	// A task published after every answered one only waits its turn.
	w.sent(1, t0.Add(20*time.Second))
	if got := w.overdue([]int{1}, t0.Add(60*time.Second), false); len(got) != 0 {
		t.Errorf("overdue: %v, want none: nothing published after task 1 was answered", got)
	}
	// Unless nothing waits in the queue: then it is in a worker's hands.
	if got := w.overdue([]int{1}, t0.Add(60*time.Second), true); !slices.Equal(got, []int{1}) {
		t.Errorf("overdue with the queue idle: %v, want [1]", got)
	}
}
