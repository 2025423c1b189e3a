package coordinator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// TestRun_coordinatorRestart: the coordinator stops a third of the way
// through while the workers go on; started again, it finishes the job, and
// only tasks in a worker's hands at the restart are solved twice.
func TestRun_coordinatorRestart(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	workCtx, stopWorkers := context.WithCancel(context.Background())
	var solved atomic.Int64
	wait1 := c.startCountingWorker(t, workCtx, "w1", &solved)
	wait2 := c.startCountingWorker(t, workCtx, "w2", &solved)
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 32}

	ctx1, crash := context.WithCancel(context.Background())
	var total, atCrash int64
	cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), StatusEvery: time.Second,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving && p.Total > 0 && p.Done >= p.Total/3 && total == 0 {
				total, atCrash = p.Total, solved.Load()
				crash()
			}
		}}
	first, err := coordinator.Run(ctx1, cfg)
	if err == nil || total == 0 {
		t.Fatalf("first run was not stopped midway: %+v, %v", first, err)
	}
	// The workers solve on while no coordinator runs: a result at least
	// comes in between the runs (unless they had answered every task).
	waitUntil(t, "a worker's result after the stop", func() bool { return solved.Load() > atCrash || solved.Load() >= total })
	cfg.Progress = nil
	second, err := coordinator.Run(context.Background(), cfg)
	stopWorkers()
	wait1()
	wait2()
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, "", spec.Depth)
	if second.Positions != int64(n) {
		t.Errorf("second run: %d positions, want %d", second.Positions, n)
	}
	if first.Solved+second.Solved != total {
		t.Errorf("stored %d + %d positions, want %d", first.Solved, second.Solved, total)
	}
	// Two worker threads: at most two tasks were in flight at the restart.
	if extra := solved.Load() - total; extra < 0 || extra > 2*int64(spec.TaskSize) {
		t.Errorf("workers solved %d positions for a job of %d: %d solved twice, want at most %d", solved.Load(), total, extra, 2*spec.TaskSize)
	}
	t.Logf("first run stored %d, second %d; workers solved %d", first.Solved, second.Solved, solved.Load())
}

// TestRun_restartInEveryPhase: the coordinator stops while it plans, and
// while it derives; run again each time, it finishes the job, and the book
// holds every position with its exact score.
func TestRun_restartInEveryPhase(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	workCtx, stopWorkers := context.WithCancel(context.Background())
	wait := c.startWorker(t, workCtx, "w")
	defer func() { stopWorkers(); wait() }()
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 64}
	var phases []book.JobState
	for _, stopIn := range []book.JobState{book.JobPlanning, book.JobDeriving} {
		ctx, stop := context.WithCancel(context.Background())
		cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), StatusEvery: time.Second,
			PlanMemKeys: 5000, // runs spilled: the planner's files are mid-way too
			Progress: func(p coordinator.Progress) {
				if p.Phase == stopIn && p.Done > 0 && p.Done != p.Total {
					stop()
				}
			}}
		_, err := coordinator.Run(ctx, cfg)
		stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run stopped while %s: %v, want context.Canceled", stopIn, err)
		}
		rec, _, _ := c.book.Job(spec.ID())
		phases = append(phases, rec.State)
	}
	if phases[0] != book.JobPlanning || phases[1] != book.JobDeriving {
		t.Errorf("job records after the stops: %v, want planning then deriving", phases)
	}
	sum, err := c.runJob(context.Background(), t, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := checkBook(t, b, c.book, "", spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("last run: %d positions, want %d", sum.Positions, n)
	}
	if _, err := os.Stat(filepath.Join(c.book.Path(), "plans", spec.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plan of the finished job is still there: %v", err)
	}
}
