package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

func TestRun_twoWorkers(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait1 := c.startWorker(t, ctx, "w1")
	wait2 := c.startWorker(t, ctx, "w2")
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 32}
	sum, err := c.runJob(ctx, t, spec)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	wait1()
	wait2()
	n := checkBook(t, b, c.book, "", spec.Depth)
	if sum.Positions != int64(n) || sum.Solved == 0 || sum.Derived == 0 || sum.Solved+sum.Derived+sum.Immediate != sum.Positions {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
	if len(sum.ByWorker) != 2 || sum.ByWorker["w1"] == 0 || sum.ByWorker["w2"] == 0 {
		t.Errorf("the two workers did not share the work: %v", sum.ByWorker)
	}
	// Run again: nothing to do.
	again, err := c.runJob(context.Background(), t, spec)
	if err != nil || !again.AlreadyDone {
		t.Errorf("second run: %+v, %v", again, err)
	}
}

// TestRun_7x6 builds a 7x6 sub-book under a deep root with two workers and
// checks every position against the solver.
func TestRun_7x6(t *testing.T) {
	t.Parallel()
	b := solver.Standard
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait1 := c.startWorker(t, ctx, "w1")
	wait2 := c.startWorker(t, ctx, "w2")
	spec := coordinator.Spec{Board: b, Root: "274552224131661", Depth: 18, TaskSize: 16}
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	wait1()
	wait2()
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, spec.Root, spec.Depth)
	if sum.Positions != int64(n) || sum.Solved == 0 {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
}

// TestRun_deriveProgress: the progress of the deriving phase counts the
// positions above the leaves, out of all of them: it starts at 0 of that
// total, never goes back and ends at the total, which stays the same
// throughout.
func TestRun_deriveProgress(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait := c.startWorker(t, ctx, "w1")
	defer func() { cancel(); wait() }()
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 64}
	var deriving []coordinator.Progress // reports come one at a time
	_, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream,
		Log: logger(t), StatusEvery: time.Second,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobDeriving {
				deriving = append(deriving, p)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.book.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var above int64 // the book holds this job alone
	for _, d := range st.Depths {
		if d.Depth < spec.Depth {
			above += d.Entries
		}
	}
	if len(deriving) < 2 {
		t.Fatalf("%d reports while deriving: want the start and the end at least", len(deriving))
	}
	for i, p := range deriving {
		if p.Total != above {
			t.Fatalf("report %d of %d: %d/%d: want the %d positions above the leaves as the total of every report", i, len(deriving), p.Done, p.Total, above)
		}
		if i == 0 && p.Done != 0 || i > 0 && p.Done < deriving[i-1].Done {
			t.Fatalf("report %d: done %d after %d: want 0 first, then never less", i, p.Done, deriving[max(i-1, 0)].Done)
		}
	}
	if last := deriving[len(deriving)-1]; last.Done != last.Total {
		t.Errorf("last report %d/%d: want all done", last.Done, last.Total)
	}
}
