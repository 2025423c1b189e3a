package coordinator

import (
	"context"
	"sync"
	"testing"

	"github.com/c4book/c4book/solver"
)

// deriveReports records the progress calls of a Derive.
type deriveReports struct {
	mu    sync.Mutex
	calls [][2]int64 // done, total
}

func (r *deriveReports) report(done, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, [2]int64{done, total})
}

// check fails tb unless the calls count from 0 up to total, never going
// back, with the same total in each.
func (r *deriveReports) check(tb testing.TB, total int64) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) < 2 {
		tb.Fatalf("%d progress calls: want the start, the end and some between", len(r.calls))
	}
	if first := r.calls[0]; first[0] != 0 {
		tb.Errorf("first call %v: want done 0", first)
	}
	for i, c := range r.calls {
		if c[1] != total {
			tb.Fatalf("call %d of %d: %v: want the total %d in every call", i, len(r.calls), c, total)
		}
		if i > 0 && c[0] <= r.calls[i-1][0] {
			tb.Fatalf("call %d: %v after %v: done must grow", i, c, r.calls[i-1])
		}
	}
	if last := r.calls[len(r.calls)-1]; last[0] != total {
		tb.Errorf("last call %v: want done = total = %d", last, total)
	}
}

// TestDerive_progress: Derive reports the positions above the leaves gone
// through, out of all of them, from 0 to the total, never going back,
// though its goroutines count concurrently; a derivation cut short and
// run again reaches the total too, deriving only what was left.
func TestDerive_progress(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := Spec{Board: b, Depth: 11, TaskSize: 16}
	var above int64 // positions of the job above the leaves
	for _, p := range jobPositions(b, "", spec.Depth) {
		if p.Moves() < spec.Depth {
			above++
		}
	}
	bk := newBook(t, b)
	dir := t.TempDir()
	pl, err := MakePlan(context.Background(), spec, bk, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	solveLeaves(t, b, bk, planLeaves(t, dir))
	toDerive := pl.Positions - pl.Immediate - pl.Leaves // the book held nothing

	// Cut short half way.
	ctx, cancel := context.WithCancel(context.Background())
	first, err := Derive(ctx, spec, bk, dir, func(done, total int64) {
		if done > total/2 {
			cancel()
		}
	})
	if err == nil || first == 0 || first >= toDerive {
		t.Fatalf("Derive cut short: %d derived, %v; want some of %d, and an error", first, err, toDerive)
	}

	var again deriveReports
	rest, err := Derive(context.Background(), spec, bk, dir, again.report)
	if err != nil {
		t.Fatal(err)
	}
	if first+rest != toDerive {
		t.Errorf("derived %d, then %d: want %d in all", first, rest, toDerive)
	}
	again.check(t, above)
}
