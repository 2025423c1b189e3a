package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// lanesOf returns lane states from a picture: one byte a lane, '.' no
// task waiting, 'f' tasks waiting and nobody there (free), 'b' a worker
// there and tasks waiting, 'B' a worker there and none waiting.
func lanesOf(picture string) []laneState {
	lanes := make([]laneState, len(picture))
	for i, c := range picture {
		switch c {
		case 'f':
			lanes[i] = laneState{pending: 5}
		case 'b':
			lanes[i] = laneState{pending: 5, others: 1}
		case 'B':
			lanes[i] = laneState{others: 1}
		}
	}
	return lanes
}

func TestChooseLane(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		picture string
		cur     int
		want    int
		why     string
	}{
		{"ffffffff", -1, 0, "alone at the start: the job's order"},
		{"..ffffff", -1, 2, "alone: the first lane with tasks"},
		{"ffffffff", 3, 4, "on through the order"},
		{"ff..ffff", 1, 4, "over finished lanes"},
		{"ffffffff", 7, 0, "round to the first"},
		{"Bfffffff", -1, 4, "a second worker: the middle of what is left"},
		{"bfffffff", 0, 1, "the next lane, nobody's"},
		{"fBffffff", 0, 5, "the next lane is another's: the middle of the largest run"},
		{"BfffBfff", -1, 2, "two workers, two runs of 3: the middle of the first"},
		{"Bfff.Bff", -1, 2, "finished lanes are part of a run"},
		{"Bb.b....", 0, 1, "no lane free: the most tasks (the first of equals)"},
		{"BB..B...", 0, -1, "no lane with tasks"},
		{"", -1, -1, "no lanes"},
	} {
		if got := chooseLane(lanesOf(tc.picture), tc.cur); got != tc.want {
			t.Errorf("chooseLane(%q, %d) = %d, want %d: %s", tc.picture, tc.cur, got, tc.want, tc.why)
		}
	}
	// The tail: the lane with the most tasks waiting.
	lanes := lanesOf("bbbb")
	lanes[2].pending = 9
	if got := chooseLane(lanes, 0); got != 2 {
		t.Errorf("the tail: chooseLane = %d, want 2, the lane with the most tasks", got)
	}
}

func TestTaskLane(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 63, 64, 65, 100, 1000, 362_378} {
		prev, count := 0, make([]int, JobLanes(n))
		for i := range n {
			l := TaskLane(i, n)
			if l < prev || l > prev+1 || l >= JobLanes(n) {
				t.Fatalf("n=%d: task %d in lane %d after lane %d: lanes must be stretches of the order", n, i, l, prev)
			}
			prev = l
			count[l]++
		}
		if lo, hi := slices.Min(count), slices.Max(count); hi-lo > 1 || lo == 0 {
			t.Errorf("n=%d: lanes of %d to %d tasks, want equal stretches", n, lo, hi)
		}
	}
}

func TestParseTaskSubject(t *testing.T) {
	t.Parallel()
	if job, lane, ok := parseTaskSubject(TaskLaneSubject("j-1", 7)); !ok || job != "j-1" || lane != 7 {
		t.Errorf("parseTaskSubject(%q) = %q, %d, %v", TaskLaneSubject("j-1", 7), job, lane, ok)
	}
	for _, s := range []string{"c4book.tasks.j", "c4book.tasks.j.7", "c4book.tasks.j.64", "c4book.tasks.j.-1", "c4book.tasks.j.0x", "c4book.results.j.07", "c4book.tasks.j.07.1"} {
		if _, _, ok := parseTaskSubject(s); ok {
			t.Errorf("parseTaskSubject(%q) ok, want not a task subject", s)
		}
	}
	if l, ok := parseLaneConsumer(LaneConsumer(63)); !ok || l != 63 {
		t.Errorf("parseLaneConsumer(%q) = %d, %v", LaneConsumer(63), l, ok)
	}
	if _, ok := parseLaneConsumer("c4book-workers"); ok {
		t.Error("parseLaneConsumer(c4book-workers) ok")
	}
}

// laneTasks returns n tasks of job j, one position each, in the lanes a
// coordinator gives them (TaskLane), each saying how many of its lane
// follow it.
func laneTasks(tb testing.TB, job string, n int) []Task {
	tasks := make([]Task, n)
	for i := range tasks {
		tasks[i] = testTask(tb, job, uint64(i+1), 1)
		tasks[i].Lane = TaskLane(i, n)
	}
	for i := range tasks {
		for k := i + 1; k < n && tasks[k].Lane == tasks[i].Lane; k++ {
			tasks[i].LaneLeft++
		}
	}
	return tasks
}

// TestTaskSource_lanes: two workers that take tasks together each take
// whole stretches of the job's order: every lane is taken by one worker
// (but the last, whose tail two may share), each worker's lanes follow
// each other, and together they take every task once.
func TestTaskSource_lanes(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	const n = 8 * Lanes // 8 tasks a lane
	tasks := laneTasks(t, "j", n)
	if _, err := publishTasksOf(coord, tasks); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 60*time.Second)
	allTaken, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	took := map[uint64]string{}
	byLane := make([]map[string]int, Lanes)
	for l := range byLane {
		byLane[l] = map[string]int{}
	}
	var wg sync.WaitGroup
	for _, name := range []string{"w1", "w2"} {
		src := taskSource(t, connectTo(t, s, name))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := src.Next(allTaken)
				if allTaken.Err() != nil {
					return
				}
				if err != nil {
					t.Errorf("%s: Next: %v", name, err)
					return
				}
				mu.Lock()
				if other, ok := took[m.Task.TaskID]; ok {
					t.Errorf("task %d taken by %s and %s", m.Task.TaskID, other, name)
				}
				took[m.Task.TaskID] = name
				byLane[m.Task.Lane][name]++
				all := len(took) == n
				mu.Unlock()
				time.Sleep(time.Millisecond) // a task takes time: the other worker chooses meanwhile
				if err := m.Ack(ctx); err != nil {
					t.Errorf("%s: Ack: %v", name, err)
				}
				if all {
					stop()
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("took %d of %d tasks in a minute", len(took), n)
	}
	shared := 0
	var order []string
	for l, by := range byLane {
		if len(by) > 1 {
			shared++
		}
		names := make([]string, 0, 2)
		for name := range by {
			names = append(names, name)
		}
		slices.Sort(names)
		order = append(order, fmt.Sprint(l, names))
	}
	// Stretches: the lanes each worker took alone, counted as runs.
	runs := 0
	prev := ""
	for l, by := range byLane {
		owner := "shared"
		if len(by) == 1 {
			for name := range by {
				owner = name
			}
		}
		if l == 0 || owner != prev {
			runs++
		}
		prev = owner
	}
	t.Logf("lanes: %v", order)
	if shared > 4 || runs > 8 {
		t.Errorf("%d lanes shared by both workers and %d runs of lanes; want whole stretches (a few lanes shared at most, a few runs)", shared, runs)
	}
}

// publishTasksOf publishes tasks, as the coordinator does.
func publishTasksOf(c *Conn, tasks []Task) (int, error) {
	return len(tasks), c.PublishTasks(context.Background(), tasks)
}

// TestTaskSource_abandonedLane: a worker that dies holding a task leaves
// it in its lane, delivered and not answered, where only a pull brings it
// out again: another worker looking for work takes that lane once it has
// delivered nothing for two AckWaits, and gets the task.
func TestTaskSource_abandonedLane(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, StreamConfig{AckWait: time.Second, MaxDeliver: 5})
	task := testTask(t, "j", 1, 1)
	task.Lane = 5
	publishTasks(t, coord, task)
	dying := connectTo(t, s, "dying")
	if m := nextTask(t, taskSource(t, dying)); m.Task.Lane != 5 {
		t.Fatalf("the dying worker took a task of lane %d, want 5", m.Task.Lane)
	}
	dying.Close() // gone, without a word
	m, err := taskSource(t, connectTo(t, s, "survivor")).Next(testCtx(t, 20*time.Second))
	if err != nil {
		t.Fatalf("the survivor's Next: %v (the abandoned lane's task was never delivered again)", err)
	}
	if m.Task.TaskID != 1 || m.Delivered != 2 {
		t.Errorf("the survivor took task %d, delivery %d; want task 1, delivered a second time", m.Task.TaskID, m.Delivered)
	}
}

// TestTaskSource_aloneStays: a worker alone in the job, which takes its
// next task while it solves one and acks each task on another goroutine
// (as worker.Run does), goes through the lanes in order, each once: the
// acks that land while it looks at the lanes do not look like another
// worker in its lane. (They did: in the first depth-14 run each worker
// left its stretch every few seconds to a minute, for the next lane.)
func TestTaskSource_aloneStays(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	const n = 12 * Lanes
	tasks := laneTasks(t, "j", n)
	if _, err := publishTasksOf(coord, tasks); err != nil {
		t.Fatal(err)
	}
	src := taskSource(t, connectTo(t, s, "w"))
	src.lookEvery = 5 * time.Millisecond // a look at nearly every task
	ctx := testCtx(t, 60*time.Second)
	taken := make(chan *TaskMsg, 1) // the task taken while one is solved
	go func() {
		defer close(taken)
		for range n {
			m, err := src.Next(ctx)
			if err != nil {
				t.Errorf("Next: %v", err)
				return
			}
			taken <- m
		}
	}()
	var acks sync.WaitGroup
	var lanes []int // the lanes of the tasks, in the order taken
	for m := range taken {
		lanes = append(lanes, m.Task.Lane)
		time.Sleep(time.Millisecond) // solving
		acks.Add(1)
		go func() {
			defer acks.Done()
			if err := m.Ack(ctx); err != nil {
				t.Errorf("Ack: %v", err)
			}
		}()
	}
	acks.Wait()
	if len(lanes) != n {
		t.Fatalf("took %d of %d tasks", len(lanes), n)
	}
	var visits []int // the lanes, one entry per visit
	for i, l := range lanes {
		if i == 0 || l != lanes[i-1] {
			visits = append(visits, l)
		}
	}
	if len(visits) != Lanes || !slices.IsSorted(visits) {
		t.Errorf("the worker alone visited the lanes %v: want each once, in order", visits)
	}
}
