package coordinator

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// The collecting of results (collect.go), on fakes of the book and queue:
// what is stored, acked, published again, cross-checked and refereed.

// TestCollect checks results against the plan with fakes of the book and
// the queue: a good result is stored and its task done; forged ones are
// rejected and their worker quarantined in the end.
func TestCollect(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	j, mb, fq := testJob(t, spec, Config{})
	if j.tasks.Len() < 3 || len(fq.published) != j.tasks.Len() {
		t.Fatalf("%d tasks, %d published", j.tasks.Len(), len(fq.published))
	}
	ctx := context.Background()
	planned := len(mb.entries) // the positions scored at once
	good := solvedResult(t, j, 0, "honest")
	win := solvedResult(t, j, 1, "liar")
	win.Scores[0] = int8(spec.Board.WinNowScore(spec.Depth)) // a leaf never wins at once
	keys := solvedResult(t, j, 2, "liar")
	keys.Keys[0], keys.Keys[1] = keys.Keys[1], keys.Keys[0]
	never := solvedResult(t, j, 2, "liar")
	never.TaskID = taskID(2, 0, 2) // run 2 has not begun
	reps := make([]*replies, 4)
	var msgs []*queue.ResultMsg
	for i, r := range []queue.Result{good, win, keys, never} {
		reps[i] = &replies{}
		msgs = append(msgs, resultMsg(r, reps[i]))
	}
	n, err := j.collect(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(good.Keys)) || !j.tasks.done[0] || j.tasks.done[1] || j.tasks.done[2] {
		t.Errorf("collect stored %d positions, done %v: want task 0 alone", n, j.tasks.done)
	}
	if reps[0].acked != 1 || reps[1].termed != 1 || reps[2].termed != 1 || reps[3].termed != 1 {
		t.Errorf("replies %+v %+v %+v %+v: want the good one acked, the others terminated", *reps[0], *reps[1], *reps[2], *reps[3])
	}
	if len(mb.entries)-planned != len(good.Keys) || j.summary.Rejected != 3 || !j.quarantined["liar"] || j.quarantined["honest"] {
		t.Errorf("%d entries written, %d rejected, quarantined %v", len(mb.entries)-planned, j.summary.Rejected, j.quarantined)
	}
	// Tasks 1 and 2 lost their copy to the liar: published again.
	if republished := fq.published[j.tasks.Len():]; len(republished) != 2 {
		t.Errorf("%d tasks published again, want tasks 1 and 2", len(republished))
	}
	// The quarantined worker's right answer is ignored; the duplicate of a
	// done task is acked and not written again.
	rep1, rep2 := &replies{}, &replies{}
	writes := mb.writes
	if n, err = j.collect(ctx, []*queue.ResultMsg{resultMsg(solvedResult(t, j, 1, "liar"), rep1), resultMsg(good, rep2)}); err != nil || n != 0 {
		t.Fatalf("collect = %d, %v", n, err)
	}
	if j.tasks.done[1] || rep1.termed != 1 || rep2.acked != 1 || mb.writes != writes {
		t.Errorf("task 1 done %v, replies %+v %+v, %d writes: want the liar ignored and no write", j.tasks.done[1], *rep1, *rep2, mb.writes-writes)
	}
	if j.summary.Duplicates != 1 {
		t.Errorf("%d duplicates counted, want the good result's second copy", j.summary.Duplicates)
	}
}

// TestCollect_crossCheck: a cross-checked task is stored once two workers
// agree; when they disagree the coordinator's referee solves it, beside
// the collecting goroutine: until its verdict the task is being refereed
// (not done, still pending, no copy published, a result for it a
// duplicate); with the verdict, the coordinator's scores are stored, and
// the worker that was wrong is rejected and quarantined. One worker
// answering both copies never makes a cross-check: the task is published
// again for another.
func TestCollect_crossCheck(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	j, mb, fq := testJob(t, spec, Config{CrossCheck: 1})
	// One copy each: the second copy of a checked task goes out when the
	// first is answered, never beside it.
	if len(fq.published) != j.tasks.Len() {
		t.Fatalf("%d copies published for %d tasks, want one each", len(fq.published), j.tasks.Len())
	}
	ctx := context.Background()
	collect := func(r queue.Result) {
		t.Helper()
		if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(r, &replies{})}); err != nil {
			t.Fatal(err)
		}
	}
	// Task 0: two workers agree.
	planned := len(mb.entries) // the positions scored at once
	published := len(fq.published)
	collect(solvedResult(t, j, 0, "a"))
	if j.tasks.done[0] || len(mb.entries) != planned {
		t.Fatal("a cross-checked task stored on one result")
	}
	// a is the only identity yet: nobody to check it, no copy published
	// (TestCollect_crossCheckOneIdentity); b's answer checks it.
	if !j.tasks.parked[0] || len(fq.published) != published {
		t.Fatalf("task 0 parked %v, %d copies published after the first answer of the only identity, want parked, none", j.tasks.parked[0], len(fq.published)-published)
	}
	collect(solvedResult(t, j, 0, "b"))
	if !j.tasks.done[0] || j.summary.CrossChecked != 1 {
		t.Errorf("task 0 done %v, %d cross-checked", j.tasks.done[0], j.summary.CrossChecked)
	}
	// Task 2: a answers both copies: no cross-check, a third copy goes out
	// for b (the second went out after a's first answer).
	published = len(fq.published)
	collect(solvedResult(t, j, 2, "a"))
	collect(solvedResult(t, j, 2, "a"))
	if j.tasks.done[2] || len(fq.published) != published+2 || j.summary.CrossChecked != 1 || j.summary.CrossSkipped != 0 {
		t.Errorf("task 2 done %v, %d copies published, %d cross-checked, %d skipped: want not done, one more copy, no check",
			j.tasks.done[2], len(fq.published)-published-1, j.summary.CrossChecked, j.summary.CrossSkipped)
	}
	if c := j.summary.Workers["a"]; c.CrossPassed != 1 {
		t.Errorf("a's cross-checks: %+v, want the one of task 0", c)
	}
	// Task 1: b lies; the task goes to the referee.
	truth := solvedResult(t, j, 1, "a")
	lie := solvedResult(t, j, 1, "b")
	lie.Scores[0] = -lie.Scores[0] - 1
	collect(truth)
	lieReplies := &replies{}
	pending, writes, published := j.tasks.pending, mb.writes, len(fq.published)
	if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(lie, lieReplies)}); err != nil {
		t.Fatal(err)
	}
	if j.tasks.done[1] || j.tasks.needed(1) || !j.tasks.refereeing[1] || j.tasks.pending != pending || slices.Contains(j.dispatch.outstanding(), 1) {
		t.Errorf("task 1 awaiting its verdict: done %v, needed %v, refereeing %v, %d pending (was %d), outstanding %v", j.tasks.done[1], j.tasks.needed(1), j.tasks.refereeing[1], j.tasks.pending, pending, j.dispatch.outstanding())
	}
	if lieReplies.acked != 1 || mb.writes != writes || len(fq.published) != published || j.quarantined["b"] || j.summary.Disagreements != 0 {
		t.Errorf("before the verdict: the answer's replies %+v, %d writes, %d copies published, quarantined %v, %d disagreements; want acked, nothing written or published, nobody quarantined",
			*lieReplies, mb.writes-writes, len(fq.published)-published, j.quarantined, j.summary.Disagreements)
	}
	// Another answer meanwhile is a duplicate: acked, not stored.
	late := &replies{}
	if n, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(solvedResult(t, j, 1, "c"), late)}); err != nil || n != 0 || late.acked != 1 || mb.writes != writes || j.summary.ByWorker["c"] != 0 {
		t.Errorf("an answer while task 1 is refereed: collect = %d, %v, replies %+v, %d writes, credited %d", n, err, *late, mb.writes-writes, j.summary.ByWorker["c"])
	}
	if n, err := applyVerdict(t, j); err != nil || n != j.tasks.positions(1) || j.tasks.refereeing[1] || j.tasks.pending != pending-1 || j.summary.Refereed != 1 {
		t.Errorf("the verdict: %d positions, %v; refereeing %v, %d pending, %d refereed; want task 1 done", n, err, j.tasks.refereeing[1], j.tasks.pending, j.summary.Refereed)
	}
	if !j.tasks.done[1] || j.summary.Disagreements != 1 || j.rejections["b"] != 1 || j.rejections["a"] != 0 || !j.quarantined["b"] || j.quarantined["a"] {
		t.Errorf("task 1 done %v, %d disagreements, rejections %v, quarantined %v: want b alone rejected and quarantined", j.tasks.done[1], j.summary.Disagreements, j.rejections, j.quarantined)
	}
	for i, k := range truth.Keys {
		p, _ := spec.Board.PositionFromKey(k)
		if v, ok := mb.score(p); !ok || v != int(truth.Scores[i]) {
			t.Errorf("position %d of task 1: book %d %v, want the true %d", i, v, ok, truth.Scores[i])
		}
	}
	// Task 0, which b confirmed with a, stays done.
	if !j.tasks.done[0] || j.summary.Requeued != 0 {
		t.Errorf("task 0 done %v, %d positions requeued: a cross-checked task is not b's alone", j.tasks.done[0], j.summary.Requeued)
	}
}

// TestCollect_duplicates: an answer of a task done is compared with the
// scores stored, a free cross-check: equal, nothing more; different, the
// referee solves the task, its verdict replaces the stored scores and
// quarantines whoever was wrong, the duplicate's sender or the worker
// whose scores were stored. Nothing is newly done by it. Two answers of
// one task in one batch are compared once the first is written; an
// answer of a task being refereed is not compared.
func TestCollect_duplicates(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	j, mb, _ := testJob(t, spec, Config{})
	if j.tasks.Len() < 4 {
		t.Fatalf("%d tasks, want 4 at least", j.tasks.Len())
	}
	ctx := context.Background()
	collect := func(rs ...queue.Result) int64 {
		t.Helper()
		var msgs []*queue.ResultMsg
		for _, r := range rs {
			msgs = append(msgs, resultMsg(r, &replies{}))
		}
		n, err := j.collect(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	lie := func(r queue.Result) queue.Result {
		r.Scores = slices.Clone(r.Scores)
		r.Scores[0] = -r.Scores[0] - 1
		return r
	}
	holds := func(r queue.Result) bool {
		for i, k := range r.Keys {
			p, _ := spec.Board.PositionFromKey(k)
			if v, ok := mb.score(p); !ok || v != int(r.Scores[i]) {
				return false
			}
		}
		return true
	}
	// Task 0: b agrees with what a stored.
	collect(solvedResult(t, j, 0, "a"))
	collect(solvedResult(t, j, 0, "b"))
	if j.summary.Compared != 1 || j.summary.Duplicates != 1 || j.trust.cross.awaitingVerdicts() || j.summary.Disagreements != 0 {
		t.Fatalf("an equal duplicate: %d compared, %d duplicates, awaiting a verdict %v, %d disagreements; want 1, 1, no, 0",
			j.summary.Compared, j.summary.Duplicates, j.trust.cross.awaitingVerdicts(), j.summary.Disagreements)
	}
	// b sends its answer again, twice: counted, not compared again (the
	// book is read once a sender and task), and not stored.
	collect(solvedResult(t, j, 0, "b"), solvedResult(t, j, 0, "b"))
	if j.summary.Compared != 1 || j.summary.Duplicates != 3 {
		t.Fatalf("a duplicate sent again: %d compared, %d duplicates; want 1, 3", j.summary.Compared, j.summary.Duplicates)
	}
	// Task 1: m's duplicate lies. The task stays done while refereed; the
	// verdict quarantines m, and a's scores stay.
	truth1 := solvedResult(t, j, 1, "a")
	collect(truth1)
	pending, solved := j.tasks.pending, j.summary.Solved
	collect(lie(solvedResult(t, j, 1, "m")))
	if !j.tasks.refereeing[1] || !j.tasks.done[1] || j.summary.Compared != 2 {
		t.Fatalf("a lying duplicate: task 1 refereeing %v, done %v, %d compared; want refereed, done, 2", j.tasks.refereeing[1], j.tasks.done[1], j.summary.Compared)
	}
	// Meanwhile another answer of task 1 is not compared.
	collect(solvedResult(t, j, 1, "c"))
	if j.summary.Compared != 2 {
		t.Errorf("an answer of a task refereed compared: %d compared, want 2", j.summary.Compared)
	}
	if n, err := applyVerdict(t, j); err != nil || n != 0 {
		t.Fatalf("the verdict on task 1: %d positions newly done, %v; want 0", n, err)
	}
	if !j.quarantined["m"] || j.quarantined["a"] || j.tasks.refereeing[1] || !j.tasks.done[1] || j.tasks.pending != pending || j.summary.Solved != solved ||
		j.summary.Disagreements != 1 || !holds(truth1) {
		t.Errorf("after task 1's verdict: quarantined %v, refereeing %v, done %v, %d pending (was %d), %d solved (was %d), %d disagreements, book holds a's scores %v",
			j.quarantined, j.tasks.refereeing[1], j.tasks.done[1], j.tasks.pending, pending, j.summary.Solved, solved, j.summary.Disagreements, holds(truth1))
	}
	// Task 2: x's lie was stored (no cross-checks in this job); b's
	// answer catches it, the verdict replaces it and quarantines x.
	collect(lie(solvedResult(t, j, 2, "x")))
	truth2 := solvedResult(t, j, 2, "b")
	collect(truth2)
	if n, err := applyVerdict(t, j); err != nil || n != 0 {
		t.Fatalf("the verdict on task 2: %d positions newly done, %v; want 0", n, err)
	}
	if !j.quarantined["x"] || j.quarantined["b"] || !holds(truth2) || !j.tasks.done[2] || j.summary.Disagreements != 2 {
		t.Errorf("after task 2's verdict: quarantined %v, book holds the true scores %v, done %v, %d disagreements; want x quarantined, the scores replaced",
			j.quarantined, holds(truth2), j.tasks.done[2], j.summary.Disagreements)
	}
	if n := int64(len(truth2.Keys)); j.summary.ByWorker["x"] != 0 || j.summary.ByWorker["b"] != n {
		t.Errorf("task 2 credited to x %d, b %d; want b's %d", j.summary.ByWorker["x"], j.summary.ByWorker["b"], n)
	}
	// Task 3: two answers in one batch, the second compared once the
	// first is written.
	if n := collect(solvedResult(t, j, 3, "a"), lie(solvedResult(t, j, 3, "c"))); n != j.tasks.positions(3) || !j.tasks.refereeing[3] || j.summary.Compared != 4 {
		t.Fatalf("two answers of task 3 in one batch: %d positions stored, refereeing %v, %d compared; want task 3 stored, refereed, 4", n, j.tasks.refereeing[3], j.summary.Compared)
	}
	if _, err := applyVerdict(t, j); err != nil || !j.quarantined["c"] {
		t.Errorf("the verdict on task 3: %v, quarantined %v; want c quarantined", err, j.quarantined)
	}
}

// TestCollect_crossCheckOneIdentity: a worker alone answering the first
// copy of a cross-checked task: nobody can check it, so no copy is
// published for it to solve again for nothing; the task waits, out of the
// window. A second identity's first result unparks it and a copy goes out
// for that identity. A run left with parked tasks alone stores them on
// their first answers, counted as checks skipped.
func TestCollect_crossCheckOneIdentity(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	ctx := context.Background()

	j, _, fq := testJob(t, spec, Config{CrossCheck: 1})
	published, open := len(fq.published), j.dispatch.openAll
	if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(solvedResult(t, j, 0, "solo"), &replies{})}); err != nil {
		t.Fatal(err)
	}
	if j.tasks.done[0] || !j.tasks.parked[0] || len(fq.published) != published || j.dispatch.openAll != open-1 {
		t.Fatalf("after solo's first answer: done %v, parked %v, %d copies published, window %d of %d: want task 0 parked, no copy, its place given up",
			j.tasks.done[0], j.tasks.parked[0], len(fq.published)-published, j.dispatch.openAll, open)
	}
	if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(solvedResult(t, j, 1, "other"), &replies{})}); err != nil {
		t.Fatal(err)
	}
	var again []int
	for _, task := range fq.published[published:] {
		_, _, index := splitTaskID(task.TaskID)
		again = append(again, index)
	}
	slices.Sort(again)
	if j.tasks.parked[0] || j.tasks.nParked != 0 || !slices.Equal(again, []int{0, 1}) {
		t.Errorf("after another identity's first result: task 0 parked %v, copies published of tasks %v; want task 0 unparked, a copy of 0 and of 1", j.tasks.parked[0], again)
	}

	// Alone to the end: stored on its word.
	j, mb, _ := testJob(t, spec, Config{CrossCheck: 1})
	planned := len(mb.entries)
	if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(solvedResult(t, j, 0, "solo"), &replies{})}); err != nil {
		t.Fatal(err)
	}
	n, err := j.storeParked()
	if err != nil {
		t.Fatal(err)
	}
	if !j.tasks.done[0] || j.tasks.nParked != 0 || n != j.tasks.positions(0) || len(mb.entries) != planned+int(n) {
		t.Errorf("stored the parked: task 0 done %v, %d parked, %d positions stored, %d entries written", j.tasks.done[0], j.tasks.nParked, n, len(mb.entries)-planned)
	}
	if s := j.summary; s.CrossChecked != 0 || s.CrossSkipped != 1 || s.ByWorker["solo"] != n || s.Workers["solo"].Accepted != 1 {
		t.Errorf("summary: %d cross-checked, %d skipped, solo credited %d, %+v; want 0, 1, %d", s.CrossChecked, s.CrossSkipped, s.ByWorker["solo"], s.Workers["solo"], n)
	}
}

// TestCollect_requeue: when a worker is quarantined, the tasks it solved
// alone in the job are not done any more and are published again; the
// others' tasks stay done.
func TestCollect_requeue(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	j, _, fq := testJob(t, spec, Config{})
	ctx := context.Background()
	var msgs []*queue.ResultMsg
	for i, w := range []string{"liar", "liar", "honest"} {
		msgs = append(msgs, resultMsg(solvedResult(t, j, i, w), &replies{}))
	}
	n, err := j.collect(ctx, msgs)
	if err != nil || !j.tasks.done[0] || !j.tasks.done[1] || !j.tasks.done[2] {
		t.Fatalf("collect = %d, %v; done %v", n, err, j.tasks.done[:3])
	}
	pending, published := j.tasks.pending, len(fq.published)
	// Three impossible results: the liar is quarantined.
	msgs = msgs[:0]
	for i := 3; i < 6; i++ {
		r := solvedResult(t, j, i, "liar")
		r.Scores[0] = 100
		msgs = append(msgs, resultMsg(r, &replies{}))
	}
	n, err = j.collect(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := j.tasks.positions(0) + j.tasks.positions(1)
	if !j.quarantined["liar"] || j.tasks.done[0] || j.tasks.done[1] || !j.tasks.done[2] || n != -want || j.summary.Requeued != want {
		t.Errorf("quarantined %v, done %v, collect = %d, requeued %d: want the liar's tasks 0 and 1 not done (-%d)", j.quarantined, j.tasks.done[:3], n, j.summary.Requeued, want)
	}
	if j.tasks.pending != pending+2 || j.summary.ByWorker["liar"] != 0 || j.summary.Solved != j.tasks.positions(2) {
		t.Errorf("pending %d (was %d), by worker %v, solved %d", j.tasks.pending, pending, j.summary.ByWorker, j.summary.Solved)
	}
	// Published again: tasks 0 and 1, and 3, 4 and 5 whose results were
	// rejected.
	var again []int
	for _, task := range fq.published[published:] {
		_, _, i := splitTaskID(task.TaskID)
		again = append(again, i)
	}
	slices.Sort(again)
	if !slices.Equal(again, []int{0, 1, 3, 4, 5}) {
		t.Errorf("published again: tasks %v, want [0 1 3 4 5]", again)
	}
}

// TestCollect_refereeQueue: while the referee solves (held by its gate),
// the collecting goroutine goes on: a task two workers agree on is
// stored, and a second disagreement waits in line. The first verdict
// quarantines the liar, which voids the case in line: it is never
// solved, its task is published again with the honest answer kept, and a
// second honest answer decides it. A referee's error is the job's.
func TestCollect_refereeQueue(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "33", Depth: 6, TaskSize: 8}
	held, release := make(chan []uint64, 1), make(chan struct{})
	solves := 0 // the referee's goroutine's
	gate := func(ctx context.Context, keys []uint64) error {
		if solves++; solves == 1 {
			held <- keys
			select {
			case <-release:
			case <-ctx.Done(): // the test failed before it let the solve go
				return ctx.Err()
			}
		}
		return nil
	}
	j, mb, fq := testJob(t, spec, Config{CrossCheck: 1, refereeGate: gate})
	ctx := context.Background()
	collect := func(index int, worker string, lie bool) *replies {
		t.Helper()
		r, rep := solvedResult(t, j, index, worker), &replies{}
		if lie {
			r.Scores[0] = -r.Scores[0] - 1
		}
		if _, err := j.collect(ctx, []*queue.ResultMsg{resultMsg(r, rep)}); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	collect(0, "a", false)
	collect(0, "m", true) // the referee takes task 0, and is held
	keys := <-held
	if want, _ := j.tasks.keys(0); !slices.Equal(keys, want) {
		t.Fatalf("the referee solves %v, want task 0's %v", keys, want)
	}
	collect(1, "b", false)
	collect(1, "m", true) // in line
	collect(2, "a", false)
	collect(2, "b", false)
	if !j.tasks.done[2] || !j.tasks.refereeing[0] || !j.tasks.refereeing[1] || len(j.trust.cross.line) != 1 {
		t.Fatalf("while the referee is held: done %v, refereeing %v, %d cases in line; want task 2 stored, 0 and 1 refereed", j.tasks.done[:3], j.tasks.refereeing[:3], len(j.trust.cross.line))
	}
	published := len(fq.published)
	close(release)
	if _, err := applyVerdict(t, j); err != nil {
		t.Fatal(err)
	}
	if !j.tasks.done[0] || !j.quarantined["m"] || j.tasks.refereeing[1] || j.tasks.done[1] || j.trust.cross.awaitingVerdicts() {
		t.Fatalf("after the verdict: done %v, quarantined %v, task 1 refereeing %v, awaiting verdicts %v; want m quarantined and task 1's case void",
			j.tasks.done[:2], j.quarantined, j.tasks.refereeing[1], j.trust.cross.awaitingVerdicts())
	}
	if again := fq.published[published:]; len(again) != 1 || func() int { _, _, i := splitTaskID(again[0].TaskID); return i }() != 1 {
		t.Errorf("published after the verdict: %v, want a copy of task 1", again)
	}
	if first, ok := j.cross.firstResults[1]; !ok || first.WorkerID != "b" {
		t.Errorf("task 1's first answer: %+v, %v; want b's kept", first, ok)
	}
	collect(1, "a", false)
	if !j.tasks.done[1] || j.summary.Refereed != 1 || j.summary.Disagreements != 1 || j.summary.CrossChecked != 2 {
		t.Errorf("task 1 done %v; %d refereed, %d disagreements, %d cross-checked; want 1, 1, 2 (tasks 1 and 2)", j.tasks.done[1], j.summary.Refereed, j.summary.Disagreements, j.summary.CrossChecked)
	}
	for _, i := range []int{0, 1, 2} {
		keys, _ := j.tasks.keys(i)
		for _, k := range keys {
			p, _ := spec.Board.PositionFromKey(k)
			if _, ok := mb.score(p); !ok {
				t.Fatalf("task %d: a position not stored", i)
			}
		}
	}
	if solves != 1 {
		t.Errorf("%d solves of the referee, want 1 (the void case is not solved)", solves)
	}

	// A referee that cannot solve stops the job; the task stays undone.
	j2, _, _ := testJob(t, spec, Config{CrossCheck: 1, refereeGate: func(context.Context, []uint64) error { return errors.New("no solver") }})
	for _, w := range []string{"a", "b"} {
		r := solvedResult(t, j2, 0, w)
		if w == "b" {
			r.Scores[0] = -r.Scores[0] - 1
		}
		if _, err := j2.collect(ctx, []*queue.ResultMsg{resultMsg(r, &replies{})}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := applyVerdict(t, j2); err == nil || j2.tasks.done[0] || j2.summary.Refereed != 0 {
		t.Errorf("a verdict with an error: %v, task done %v, %d refereed; want the error, nothing done", err, j2.tasks.done[0], j2.summary.Refereed)
	}
}
