package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// TestRun_crossCheck: with every task solved twice, a worker that answers
// plausible but wrong scores (in range, so only a second opinion catches
// them) disagrees with an honest one; the coordinator decides, the liar is
// quarantined at its first failed cross-check, the tasks it alone answered
// are solved again, and the book is right. With one worker only, there is
// nobody to check against: the cross-checks are skipped, and the job
// completes.
func TestRun_crossCheck(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	drawAll := func(t *queue.Task) []int8 { return make([]int8, len(t.Keys)) }

	t.Run("liar and honest worker", func(t *testing.T) {
		t.Parallel()
		c := newCluster(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		waitLiar := c.liar(t, ctx, "liar", drawAll)
		waitHonest := c.startWorker(t, ctx, "honest")
		sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), CrossCheck: 1, RefereeTableBytes: 1 << 20})
		cancel()
		waitLiar()
		waitHonest()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Disagreements == 0 || len(sum.Quarantined) != 1 || sum.Quarantined[0] != "liar" {
			t.Errorf("disagreements %d, quarantined %v; want some, and [liar]", sum.Disagreements, sum.Quarantined)
		}
		if l, h := sum.Workers["liar"], sum.Workers["honest"]; l.CrossFailed == 0 || l.Rejected == 0 || h.CrossFailed != 0 || h.CrossPassed == 0 || h.Rejected != 0 || h.Accepted == 0 {
			t.Errorf("results by worker: liar %+v, honest %+v; want the liar's cross-checks failed, the honest worker's passed", l, h)
		}
		// The liar's draws are true on a task whose positions all draw:
		// it may be credited with such a task, once an honest worker
		// agreed (a passed cross-check), never with one on its word alone.
		if got, most := sum.ByWorker["liar"], int64(sum.Workers["liar"].CrossPassed)*int64(spec.TaskSize); got > most {
			t.Errorf("positions stored on the liar's word: %d, more than its %d passed cross-checks of %d positions hold", got, sum.Workers["liar"].CrossPassed, spec.TaskSize)
		}
		t.Logf("%d cross-checked, %d disagreements, %d skipped (the honest worker alone, after the quarantine), %d positions requeued", sum.CrossChecked, sum.Disagreements, sum.CrossSkipped, sum.Requeued)
		checkBook(t, b, c.book, spec.Root, spec.Depth)
	})
	t.Run("one worker", func(t *testing.T) {
		t.Parallel()
		c := newCluster(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wait := c.startWorker(t, ctx, "alone")
		sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), CrossCheck: 0.5, RefereeTableBytes: 1 << 20})
		cancel()
		wait()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Disagreements != 0 || len(sum.Quarantined) != 0 || sum.CrossChecked != 0 || sum.CrossSkipped == 0 {
			t.Errorf("an honest worker alone: %d disagreements, quarantined %v, %d cross-checked, %d skipped; want the cross-checks skipped", sum.Disagreements, sum.Quarantined, sum.CrossChecked, sum.CrossSkipped)
		}
		if c := sum.Workers["alone"]; c.CrossPassed != 0 || c.CrossFailed != 0 || c.Rejected != 0 || c.Accepted == 0 {
			t.Errorf("results of the worker alone: %+v, want accepted, no cross-check", c)
		}
		checkBook(t, b, c.book, spec.Root, spec.Depth)
	})
}

// TestRun_crossCheckLiar: a liar with a valid key (mallory), registered in
// the book, lies about every other result with scores the checks cannot
// tell from true ones; it works alone at first, so that some of its
// results are stored on its word, then two honest workers join. With half
// of the tasks cross-checked, the liar fails a cross-check and is
// quarantined; the coordinator is stopped right then and started again:
// the second run refuses the liar from its start (the job's record keeps
// the quarantine), the liar's results stored in the first run are solved
// again by the others, and the finished book equals an honest run's,
// entry for entry, with no entry of the liar's left.
func TestRun_crossCheckLiar(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}

	honest := newCluster(t, b)
	hctx, hcancel := context.WithCancel(context.Background())
	hwait := honest.startWorker(t, hctx, "honest")
	if _, err := honest.runJob(hctx, t, spec); err != nil {
		t.Fatal(err)
	}
	hcancel()
	hwait()
	want := bookScores(t, honest.book)

	k := newKeyedCluster(t, b, "alice", "bob", "mallory")
	var liarNumber uint32
	for _, name := range []string{"alice", "bob", "mallory"} {
		w, err := k.book.AddWorker(name, k.keys[name].PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		if name == "mallory" {
			liarNumber = w.Number
		}
	}
	workCtx, stopWorkers := context.WithCancel(context.Background())
	defer stopWorkers()
	lc := k.dial(t, workCtx, "mallory")
	ltasks, err := lc.Tasks(workCtx)
	if err != nil {
		t.Fatal(err)
	}
	liar := &lyingPublisher{Publisher: lc, board: b, first: make(chan struct{})}
	liarDone := make(chan error, 1)
	go func() {
		liarDone <- worker.Run(workCtx, ltasks, liar, worker.Config{ID: "mallory", Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)})
	}()

	// The first run: stopped as soon as the liar fails a cross-check.
	ctx1, stop1 := context.WithCancel(context.Background())
	defer stop1()
	cfg := coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), StatusEvery: time.Second,
		CrossCheck: 0.5, RefereeTableBytes: 1 << 20}
	cfg1 := cfg
	cfg1.OnResult = func(worker string, ok bool) {
		if worker == "mallory" && !ok {
			stop1()
		}
	}
	runDone := make(chan struct{})
	var sum1 coordinator.Summary
	var err1 error
	go func() {
		defer close(runDone)
		sum1, err1 = coordinator.Run(ctx1, cfg1)
	}()
	// The honest workers join once an entry of the liar's is in the book.
	for !liarStored(t, k.book, spec.Depth, liarNumber) {
		select {
		case <-runDone:
			t.Fatalf("the first run ended before the liar's results were stored: %v", err1)
		case <-time.After(10 * time.Millisecond):
		}
	}
	aliceDone := k.runWorker(t, workCtx, "alice")
	bobDone := k.runWorker(t, workCtx, "bob")
	<-runDone
	if !errors.Is(err1, context.Canceled) {
		t.Fatalf("first run: %v; want stopped at the liar's failed cross-check (the job ended before the liar was caught?)", err1)
	}
	if !slices.Equal(sum1.Quarantined, []string{"mallory"}) || sum1.Workers["mallory"].CrossFailed == 0 || sum1.Requeued == 0 {
		t.Fatalf("first run: quarantined %v, mallory %+v, %d positions requeued; want mallory, a failed cross-check, its stored results requeued",
			sum1.Quarantined, sum1.Workers["mallory"], sum1.Requeued)
	}
	if rec, _, _ := k.book.Job(spec.ID()); !slices.Equal(rec.Quarantined, []string{"mallory"}) || rec.State != book.JobSolving {
		t.Fatalf("job record after the first run: state %s, quarantined %v; want solving, [mallory]", rec.State, rec.Quarantined)
	}

	// The coordinator started again: the liar is refused from the start.
	sum2, err := coordinator.Run(context.Background(), cfg)
	stopWorkers()
	for name, done := range map[string]<-chan error{"mallory": liarDone, "alice": aliceDone, "bob": bobDone} {
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sum2.Quarantined, []string{"mallory"}) || sum2.Workers["mallory"].Accepted != 0 || sum2.ByWorker["mallory"] != 0 {
		t.Errorf("second run: quarantined %v, mallory %+v, %d positions of mallory's; want [mallory] and none of its results taken",
			sum2.Quarantined, sum2.Workers["mallory"], sum2.ByWorker["mallory"])
	}
	if got := bookScores(t, k.book); !maps.Equal(got, want) {
		wrong := 0
		for key, s := range got {
			if want[key] != s {
				wrong++
			}
		}
		t.Fatalf("the book differs from the honest book: %d entries (honest %d), %d scores wrong", len(got), len(want), wrong)
	}
	for e, err := range k.book.Entries(0, 64) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Worker == liarNumber {
			t.Fatalf("%v: still the liar's", e)
		}
	}
	t.Logf("first run: %d results lied about, %d cross-checked tasks, %d disagreements, %d skipped, %d positions requeued; second run: %d of mallory's results ignored, %d positions solved, %d cross-checked",
		liar.lies.Load(), sum1.CrossChecked, sum1.Disagreements, sum1.CrossSkipped, sum1.Requeued, sum2.Ignored, sum2.Solved, sum2.CrossChecked)
}

// liarStored reports whether the book holds an entry of depth solved by
// worker number n.
func liarStored(t *testing.T, bk *book.Book, depth int, n uint32) bool {
	t.Helper()
	for e, err := range bk.Entries(depth, depth) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Worker == n {
			return true
		}
	}
	return false
}

// TestRun_crossCheckOneIdentity: two workers holding one key are one
// identity: with every task cross-checked, their copies never count as a
// cross-check; with no other identity, no second copy is published (its
// solve could check nothing), every check is skipped, the summary says
// so, and the job completes with a right book.
func TestRun_crossCheckOneIdentity(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	k := newKeyedCluster(t, b, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done1 := k.runWorker(t, ctx, "alice")
	done2 := k.runWorker(t, ctx, "alice")
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), CrossCheck: 1, RefereeTableBytes: 1 << 20})
	cancel()
	for _, done := range []<-chan error{done1, done2} {
		if werr := <-done; werr != nil {
			t.Errorf("worker: %v", werr)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Workers["alice"]; sum.CrossChecked != 0 || sum.Disagreements != 0 || c.CrossPassed != 0 || c.CrossFailed != 0 || sum.CrossSkipped == 0 {
		t.Errorf("%d cross-checked, %d disagreements, alice %+v, %d skipped; want no cross-check, every one skipped", sum.CrossChecked, sum.Disagreements, c, sum.CrossSkipped)
	}
	// No copy that nobody could check was solved: one answer a task.
	if c := sum.Workers["alice"]; c.Accepted != uint64(sum.CrossSkipped) {
		t.Errorf("alice's results accepted: %d for %d tasks; want one a task, no copy solved for nothing", c.Accepted, sum.CrossSkipped)
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
	t.Logf("%d tasks' cross-checks skipped; alice %+v", sum.CrossSkipped, sum.Workers["alice"])
}

// TestRun_crossCheckHoarder: a liar that holds many tasks at once and
// looks for copies of one task among them (the cross-checked ones) answers
// those truly and lies on every other. Cross-checks decided when a task
// is published would give it away: both copies of a checked task sat
// side by side in the stream, so a hoarder saw them, and its lies on the
// others were never checked. A task is checked only after its first
// answer now, so at the time it answers, every task looks the same to it:
// it lies on all it holds, half of them are checked (cross-check 0.5),
// the honest worker's answers to the second copies disagree, and the liar
// is quarantined. It takes one hoard of 40 tasks and leaves; the honest
// worker finishes the job, and the book is exact.
func TestRun_crossCheckHoarder(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 4}
	k := newKeyedCluster(t, b, "alice", "mallory")
	for _, name := range []string{"alice", "mallory"} {
		if _, err := k.book.AddWorker(name, k.keys[name].PublicKey); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobDone := make(chan struct{})
	var sum coordinator.Summary
	var runErr error
	go func() {
		defer close(jobDone)
		sum, runErr = coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream,
			Log: logger(t), CrossCheck: 0.5, RefereeTableBytes: 1 << 20})
	}()

	mc := k.dial(t, ctx, "mallory")
	mtasks, err := mc.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const hoard = 40
	var held []*queue.TaskMsg
	for len(held) < hoard {
		msg, err := mtasks.Next(ctx)
		if err != nil {
			t.Fatalf("mallory taking task %d: %v", len(held)+1, err)
		}
		held = append(held, msg)
	}
	seen := map[string]int{}
	sig := func(t *queue.Task) string { return fmt.Sprint(t.Keys) }
	for _, m := range held {
		seen[sig(&m.Task)]++
	}
	s, _ := solver.New(b, 1<<20)
	lies, truths := 0, 0
	for _, m := range held {
		task := &m.Task
		scores := make([]int8, len(task.Keys))
		for i, key := range task.Keys {
			p, err := b.PositionFromKey(key)
			if err != nil {
				t.Fatal(err)
			}
			v := s.Solve(p)
			if seen[sig(task)] == 1 { // alone: not checked, it thinks
				if v == 0 {
					v = -1
				} else {
					v = 0
				}
			}
			scores[i] = int8(v)
		}
		if seen[sig(task)] == 1 {
			lies++
		} else {
			truths++
		}
		if err := mc.PublishResult(ctx, queue.Result{JobID: task.JobID, TaskID: task.TaskID, WorkerID: "mallory", Keys: task.Keys, Scores: scores}); err != nil {
			t.Fatal(err)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mc.Close()
	t.Logf("mallory held %d tasks: lied on %d, answered %d truly (it saw their copies)", hoard, lies, truths)

	aliceDone := k.runWorker(t, ctx, "alice")
	<-jobDone
	cancel()
	if err := <-aliceDone; err != nil {
		t.Errorf("alice: %v", err)
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if !slices.Equal(sum.Quarantined, []string{"mallory"}) || sum.Workers["mallory"].CrossFailed == 0 {
		t.Errorf("quarantined %v, mallory %+v: want mallory caught by a cross-check", sum.Quarantined, sum.Workers["mallory"])
	}
	checkBook(t, b, k.book, spec.Root, spec.Depth)
	t.Logf("%d cross-checked tasks, %d disagreements, %d positions solved again", sum.CrossChecked, sum.Disagreements, sum.Requeued)
}
