package coordinator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// TestRun_forgedResults: results for a task never issued, with other
// positions than the task's, or with a score no position can have are
// rejected, and nothing of them is written.
func TestRun_forgedResults(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 16}
	// The first run's first task is index 0 of the plan, run 1.
	scratch := newScratchBook(t, b)
	_, tasks := coordinator.PlanTasks(t, spec, scratch)
	first := tasks[0]
	id := uint64(1) << 40 // run 1, index 0
	scores := make([]int8, len(first))
	wrongKeys := append([]uint64(nil), first...)
	wrongKeys[0] = first[1]
	huge := append([]int8(nil), scores...)
	huge[0] = 30 // no position of 5x4 with 8 or more stones scores 30
	// The job is open (the result stream stores open jobs' results only),
	// as if its coordinator had started and stopped.
	if _, err := c.conn.Results(context.Background(), spec.ID()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []queue.Result{
		{JobID: spec.ID(), TaskID: 1<<40 | 999999, WorkerID: "forger", Keys: first, Scores: scores},
		{JobID: spec.ID(), TaskID: 7 << 40, WorkerID: "forger", Keys: first, Scores: scores},
		{JobID: spec.ID(), TaskID: id, WorkerID: "forger", Keys: wrongKeys, Scores: scores},
		// Another forger: the same message id would be deduplicated.
		{JobID: spec.ID(), TaskID: id, WorkerID: "forger2", Keys: first, Scores: huge},
	} {
		if err := c.conn.PublishResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := c.startWorker(t, ctx, "honest")
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	wait()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 4 {
		t.Errorf("%d results rejected, want 4", sum.Rejected)
	}
	if sum.ByWorker["forger"] != 0 || sum.ByWorker["forger2"] != 0 {
		t.Errorf("the forger's results were stored: %v", sum.ByWorker)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// impossibleScores answers a task of 5x4 positions with 8 stones with a
// score none of them can have: a liar's answer every check rejects.
func impossibleScores(t *queue.Task) []int8 {
	s := make([]int8, len(t.Keys))
	for i := range s {
		s[i] = 30
	}
	return s
}

// TestRun_quarantine: a worker whose results keep being rejected is
// quarantined, the tasks it took are solved by others, and the book is
// right.
func TestRun_quarantine(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	// The liar takes tasks alone first, so that it answers several
	// (with lanes, two workers that start together take different
	// stretches of the job, and the honest one could end it first); the
	// honest worker starts at its quarantine. Every task the liar took is
	// published again.
	waitLiar := c.liar(t, ctx, "liar", impossibleScores)
	waitHonest := func() {}
	accepted, rejected := map[string]int{}, map[string]int{}
	onResult := func(worker string, ok bool) {
		if ok {
			accepted[worker]++
		} else {
			rejected[worker]++
		}
		if !ok && rejected[worker] == 3 {
			waitHonest = c.startWorker(t, ctx, "honest")
		}
	}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3, OnResult: onResult})
	st, _ := c.conn.JobStatus(ctx, spec.ID())
	cancel()
	waitLiar()
	waitHonest()
	out := struct {
		sum coordinator.Summary
		err error
	}{sum, err}
	if len(st.Quarantined) != 1 || st.Quarantined[0] != "liar" {
		t.Errorf("job status shows quarantined %v, want [liar]", st.Quarantined)
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	if len(out.sum.Quarantined) != 1 || out.sum.Quarantined[0] != "liar" || out.sum.Rejected < 3 {
		t.Errorf("quarantined %v after %d rejections, want [liar] after 3", out.sum.Quarantined, out.sum.Rejected)
	}
	if out.sum.ByWorker["liar"] != 0 {
		t.Errorf("the liar's results were stored: %v", out.sum.ByWorker)
	}
	// OnResult: the liar's results until its quarantine, none after.
	if rejected["liar"] != 3 || accepted["liar"] != 0 || rejected["honest"] != 0 || accepted["honest"] == 0 {
		t.Errorf("OnResult: accepted %v, rejected %v; want the liar's 3 rejected and the honest worker's accepted", accepted, rejected)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// TestRun_quarantineKept: a worker quarantined in one run of a job is
// quarantined from the start of the next, which ignores its results
// without rejecting them again.
func TestRun_quarantineKept(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	workCtx, stopWorkers := context.WithCancel(context.Background())
	var waits []func()
	defer func() {
		stopWorkers()
		for _, wait := range waits {
			wait()
		}
	}()
	waits = append(waits, c.liar(t, workCtx, "liar", impossibleScores))

	// The first run stops once the liar is quarantined.
	quarantineInFirstRun(t, c, spec)
	if rec, _, _ := c.book.Job(spec.ID()); len(rec.Quarantined) != 1 || rec.Quarantined[0] != "liar" {
		t.Fatalf("job record after the first run: quarantined %v, want [liar]", rec.Quarantined)
	}

	waits = append(waits, c.startWorker(t, workCtx, "honest"))
	var rejected atomic.Int64
	sum, err := coordinator.Run(context.Background(), coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3,
		OnResult: func(worker string, ok bool) {
			if !ok {
				rejected.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Quarantined) != 1 || sum.Quarantined[0] != "liar" || rejected.Load() != 0 || sum.ByWorker["liar"] != 0 {
		t.Errorf("second run: quarantined %v, %d results rejected, the liar's stored %d; want [liar], 0, 0",
			sum.Quarantined, rejected.Load(), sum.ByWorker["liar"])
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// TestRun_quarantinedHoarder: a quarantined worker that goes on taking
// tasks (it can, on an external server) answers copy after copy of the
// same tasks, each ignored and published again. Those copies do not count
// towards giving a task up: alone for hundreds of copies of a task, then
// joined by an honest worker, the job ends with every task done. Before,
// 255 copies taken by the quarantined worker failed the task.
func TestRun_quarantinedHoarder(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 64}
	workCtx, stopWorkers := context.WithCancel(testCtx(t))
	var waits []func()
	defer func() {
		stopWorkers()
		for _, wait := range waits {
			wait()
		}
	}()
	// The hoarder counts its answers to each task of the second run.
	var mu sync.Mutex
	answers := map[uint64]int{}
	most := make(chan struct{})
	var mostOnce sync.Once
	waits = append(waits, c.liar(t, workCtx, "hoarder", func(task *queue.Task) []int8 {
		if task.TaskID>>48 == 2 {
			mu.Lock()
			answers[task.TaskID&(1<<32-1)]++
			if answers[task.TaskID&(1<<32-1)] == 300 {
				mostOnce.Do(func() { close(most) })
			}
			mu.Unlock()
		}
		return impossibleScores(task)
	}))

	// The first run stops once the hoarder is quarantined.
	quarantineInFirstRun(t, c, spec)

	// The second run: the hoarder alone until it has answered a task 300
	// times (or the task was given up on, and it answers no more), then an
	// honest worker joins.
	type result struct {
		sum coordinator.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := coordinator.Run(testCtx(t), coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3})
		done <- result{sum, err}
	}()
	select {
	case <-most:
	case <-time.After(time.Minute):
		t.Log("the hoarder did not answer a task 300 times in a minute")
	}
	waits = append(waits, c.startWorker(t, workCtx, "honest"))
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.ByWorker["hoarder"] != 0 {
		t.Errorf("second run: the hoarder's results stored for %d positions", r.sum.ByWorker["hoarder"])
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// quarantineInFirstRun runs the job of spec until a worker already at
// work (a liar) has had 3 results rejected, and is so quarantined, then
// stops the run.
func quarantineInFirstRun(t *testing.T, c *cluster, spec coordinator.Spec) {
	t.Helper()
	ctx, stop := context.WithCancel(testCtx(t))
	defer stop()
	var rejected atomic.Int64
	_, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), QuarantineAfter: 3,
		OnResult: func(worker string, ok bool) {
			if !ok && rejected.Add(1) == 3 {
				stop()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
}
