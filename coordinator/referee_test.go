package coordinator_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// The referee beside the collecting goroutine (crosscheck.go), end to end.

// TestRun_refereeAside: the coordinator's own solves of cross-checked
// tasks (the referee's) run beside the collecting goroutine, not on it.
// Two honest workers and a liar (mallory, every other result wrong but
// possible) share a job with every task cross-checked. The referee's
// first solve is held (a gate before it) until the results of other
// tasks are stored meanwhile: a referee solving on the collecting
// goroutine stores nothing while it solves, and the test fails. Then the
// solve is let go: its verdict is applied (mallory quarantined at its
// first failed cross-check), the held task's entries are the
// coordinator's (no worker's number), and the finished book is exact.
func TestRun_refereeAside(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}
	k := newKeyedCluster(t, b, "alice", "bob", "mallory")
	for _, name := range []string{"alice", "bob", "mallory"} {
		if _, err := k.book.AddWorker(name, k.keys[name].PublicKey); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()

	var stored atomic.Int64 // leaves stored so far, from Progress
	held := make(chan []uint64, 1)
	release := make(chan struct{})
	var solves atomic.Int64
	cfg := coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), StatusEvery: time.Second,
		CrossCheck: 1, RefereeTableBytes: 1 << 20,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving {
				stored.Store(p.Done)
			}
		}}
	coordinator.SetRefereeGate(&cfg, func(ctx context.Context, keys []uint64) error {
		if solves.Add(1) > 1 {
			return nil
		}
		held <- keys
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	jobDone := make(chan struct{})
	var sum coordinator.Summary
	var runErr error
	go func() {
		defer close(jobDone)
		sum, runErr = coordinator.Run(ctx, cfg)
	}()
	_, liarDone := startLiar(t, ctx, ctx, k, b, "mallory")
	aliceDone := k.runWorker(t, ctx, "alice")
	bobDone := k.runWorker(t, ctx, "bob")
	stopAll := func() {
		cancel()
		<-jobDone
		for name, done := range map[string]<-chan error{"mallory": liarDone, "alice": aliceDone, "bob": bobDone} {
			if err := <-done; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}

	var keys []uint64
	select {
	case keys = <-held:
	case <-jobDone:
		stopAll()
		t.Fatalf("the job ended without a referee's solve: %v; summary %+v", runErr, sum)
	}
	before := stored.Load()
	deadline := time.After(60 * time.Second)
	for stored.Load() <= before {
		select {
		case <-deadline:
			close(release)
			stopAll()
			t.Fatalf("no result stored in 60 s while the referee solved (%d leaves stored before): the collecting goroutine waits for the referee", before)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Logf("leaves stored while the referee was held: %d, then %d", before, stored.Load())
	close(release)
	<-jobDone
	cancel()
	stopAll()
	if runErr != nil {
		t.Fatal(runErr)
	}
	if !slices.Equal(sum.Quarantined, []string{"mallory"}) || sum.Workers["mallory"].CrossFailed == 0 || sum.Refereed == 0 {
		t.Errorf("quarantined %v, mallory %+v, %d refereed: want mallory caught by a cross-check", sum.Quarantined, sum.Workers["mallory"], sum.Refereed)
	}
	for _, name := range []string{"alice", "bob"} {
		if c := sum.Workers[name]; c.CrossFailed != 0 || c.Rejected != 0 {
			t.Errorf("%s: %+v, want no cross-check failed", name, c)
		}
	}
	// The held task's entries are the coordinator's.
	for _, key := range keys {
		p, err := b.PositionFromKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok, err := k.book.Get(p); err != nil || !ok || v.Worker != 0 {
			t.Errorf("a position of the refereed task: %+v, %v, %v; want in the book with no worker's number", v, ok, err)
		}
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
	t.Logf("%d refereed, %d cross-checked, %d disagreements, %d positions requeued", sum.Refereed, sum.CrossChecked, sum.Disagreements, sum.Requeued)
}
