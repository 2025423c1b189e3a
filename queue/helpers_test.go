package queue

import (
	"context"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// positionKeys returns the keys of the first n positions of board b in
// the order of a breadth-first walk from the empty board.
func positionKeys(tb testing.TB, b *solver.Board, n int) []uint64 {
	tb.Helper()
	keys := make([]uint64, 0, n)
	level := []solver.Position{b.NewPosition()}
	for len(keys) < n && len(level) > 0 {
		var next []solver.Position
		for _, p := range level {
			if len(keys) == n {
				break
			}
			keys = append(keys, p.Key())
			for col := 0; col < b.Width(); col++ {
				if p.CanPlay(col) && !p.IsWinningMove(col) {
					q := p
					q.Play(col)
					next = append(next, q)
				}
			}
		}
		level = next
	}
	if len(keys) < n {
		tb.Fatalf("board %v has fewer than %d positions", b, n)
	}
	return keys
}

// testTask returns task id of job with n positions of the 7x6 board.
func testTask(tb testing.TB, job string, id uint64, n int) Task {
	tb.Helper()
	return Task{JobID: job, TaskID: id, Width: 7, Height: 6, Keys: positionKeys(tb, solver.Standard, n)}
}

// resultFor returns worker's result of t, every score 1.
func resultFor(t Task, worker string) Result {
	scores := make([]int8, len(t.Keys))
	for i := range scores {
		scores[i] = 1
	}
	return Result{JobID: t.JobID, TaskID: t.TaskID, WorkerID: worker, Scores: scores, Keys: t.Keys, Nodes: 1000, Elapsed: time.Millisecond}
}

// testCtx returns a context that ends with the test, and at the latest
// after d: the generous deadline of a wait for an event.
func testCtx(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}
