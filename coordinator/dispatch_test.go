package coordinator

import (
	"context"
	"log/slog"
	"testing"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// TestDispatcher_lanes: the tasks of a job are cut into stretches, one per
// lane, each published a window at a time in the job's order and saying
// how many of its lane are still to come; a copy published again goes
// half the lanes away from its own.
func TestDispatcher_lanes(t *testing.T) {
	t.Parallel()
	d, fq := publishedDispatcher(t, 10*queue.Lanes, 1, 2*queue.Lanes) // 10 tasks a lane
	ctx := context.Background()
	if len(fq.published) != 2*queue.Lanes {
		t.Fatalf("%d tasks published, want a window of 2 in each of %d lanes", len(fq.published), queue.Lanes)
	}
	for _, task := range fq.published {
		_, _, i := splitTaskID(task.TaskID)
		l := i / 10
		if task.Lane != l || i%10 > 1 || task.LaneLeft != 10-(i%10)-1 {
			t.Errorf("task %d: lane %d, %d left; want the first two tasks of each lane, in lane %d, %d left", i, task.Lane, task.LaneLeft, l, 10-(i%10)-1)
		}
	}
	// Task 0 done: lane 0 gets its next task, task 2, and no other lane.
	fq.published = nil
	d.done(0)
	if err := d.publishMore(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fq.published) != 1 {
		t.Fatalf("%d tasks published after one done, want 1", len(fq.published))
	}
	if task := fq.published[0]; task.Lane != 0 || task.LaneLeft != 7 {
		t.Errorf("after task 0 done: task %d in lane %d, %d left; want task 2 in lane 0, 7 left", task.TaskID, task.Lane, task.LaneLeft)
	}
	// A copy of task 1 goes half the lanes away; the next copy one further.
	for want := range []int{queue.Lanes / 2, queue.Lanes/2 + 1} {
		fq.published = nil
		if err := d.publishAgain(ctx, []int{1}); err != nil {
			t.Fatal(err)
		}
		if len(fq.published) != 1 || fq.published[0].Lane != queue.Lanes/2+want {
			t.Errorf("copy %d of task 1: %+v, want it in lane %d", want+2, fq.published, queue.Lanes/2+want)
		}
	}
	// Every lane's tasks: issued up to its window only.
	if !d.issued(11) || d.issued(12) || !d.issued(2) || d.issued(3) {
		t.Errorf("issued: task 11 %v, 12 %v, 2 %v, 3 %v; want the first two of lane 1 (10, 11) and three of lane 0", d.issued(11), d.issued(12), d.issued(2), d.issued(3))
	}
}

// TestDispatcher_fewTasks: a job of fewer tasks than lanes puts one in
// each of its first lanes.
func TestDispatcher_fewTasks(t *testing.T) {
	t.Parallel()
	_, fq := publishedDispatcher(t, 5, 2, 4096)
	if len(fq.published) != 3 {
		t.Fatalf("%d tasks published, want 3", len(fq.published))
	}
	for k, task := range fq.published {
		if task.Lane != k || task.LaneLeft != 0 {
			t.Errorf("task %d: lane %d, %d left; want lane %d, 0 left", k, task.Lane, task.LaneLeft, k)
		}
	}
}

// TestDispatcher_copyToAnotherWorker: a copy of a task goes to the lane
// another worker than its answerer (and than the worker last seen in the
// lane of its last copy, its likely holder) answered from last (or the
// next one with tasks, when that lane has none left to hand out), so that
// a cross-check gets a second identity soon, and a straggler's task other
// hands.
func TestDispatcher_copyToAnotherWorker(t *testing.T) {
	t.Parallel()
	d, fq := publishedDispatcher(t, 10*queue.Lanes, 1, 2*queue.Lanes)
	ctx := context.Background()
	d.answered(1, "w1", true)  // lane 0
	d.answered(51, "w2", true) // lane 5
	for _, tc := range []struct{ task, lane int }{{1, 5}, {51, 0}} {
		fq.published = nil
		if err := d.publishAgain(ctx, []int{tc.task}); err != nil {
			t.Fatal(err)
		}
		if len(fq.published) != 1 || fq.published[0].Lane != tc.lane {
			t.Errorf("copy of task %d: %+v, want it in lane %d, the other worker's", tc.task, fq.published, tc.lane)
		}
	}
	// A task not answered yet, out in lane 5: w2, last seen there, likely
	// holds it; its copy goes to w1.
	fq.published = nil
	if err := d.publishAgain(ctx, []int{50}); err != nil {
		t.Fatal(err)
	}
	if len(fq.published) != 1 || fq.published[0].Lane != 0 {
		t.Errorf("copy of task 50, out in w2's lane: %+v, want it in lane 0, w1's", fq.published)
	}
	// Lane 5 has nothing left to hand out but its last task, in w2's
	// hands: w2 goes on to lane 6, where the copy of a task of w1's goes.
	d.answered(0, "w1", true) // lane 0
	_, to := d.laneBounds(5)
	d.next[5], d.open[5] = to, 1
	fq.published = nil
	if err := d.publishAgain(ctx, []int{0}); err != nil {
		t.Fatal(err)
	}
	if len(fq.published) != 1 || fq.published[0].Lane != 6 {
		t.Errorf("copy of task 0 with w2's lane done: %+v, want it in lane 6, where w2 goes on", fq.published)
	}
}

// publishedDispatcher returns the dispatcher of a job of leaves keyed 1 to
// leaves, in tasks of size, with a window of window tasks, once it has
// published its first tasks into its fake queue.
func publishedDispatcher(t *testing.T, leaves, size, window int) (*dispatcher, *fakeQueue) {
	t.Helper()
	keys := make([]uint64, leaves)
	for i := range keys {
		keys[i] = uint64(i + 1)
	}
	fq := &fakeQueue{}
	cfg := Config{Queue: fq, Window: window, Spec: Spec{Board: solver.Standard}}
	d := newDispatcher(cfg, "j", 1, 1, slog.New(slog.DiscardHandler), &Summary{}, newTaskTable(leavesOf(t, keys, nil), size))
	if err := d.publishMore(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d, fq
}
