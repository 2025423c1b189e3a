package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/splitmix"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Cross-checks: how trust (trust.go) decides a result of a task of the
// cross-checked fraction, and the coordinator's own solver, the referee,
// for when two answers disagree: a goroutine beside the collecting one.

// maxCrossCopies is how many copies of a cross-checked task are published
// in one run before the coordinator checks the result itself.
const maxCrossCopies = 4

// runSecret is drawn at each run, and kept from the workers: it chooses
// the tasks cross-checked and the copy ids.
type runSecret uint64

// checks reports whether task index is one of the cross-checked fraction:
// a well spread choice by index, keyed by the run's secret so that a
// worker cannot tell which tasks are checked.
func (s runSecret) checks(index int, fraction float64) bool {
	if fraction <= 0 {
		return false
	}
	h := splitmix.Mix(uint64(index) ^ uint64(s))
	return float64(h>>11)/(1<<53) < fraction
}

// copyID returns the copy field of the id of the copy-th copy of task
// index: the copies counted from an offset drawn from the run's secret,
// so that a worker cannot tell a first copy from a second one (and lie on
// first copies only). Ids stay distinct for 65,536 copies (taskid.go).
func (s runSecret) copyID(index, copy int) int {
	return int((uint64(copy) + splitmix.Mix(splitmix.Mix(uint64(index)^uint64(s)))) & taskCopyMask)
}

// otherIdentity reports whether an identity other than worker, and not
// quarantined, has had a result accepted in this run.
func (t *trust) otherIdentity(worker string) bool {
	for id := range t.identities {
		if id != worker && !t.quarantined[id] {
			return true
		}
	}
	return false
}

// crossOutcome is what a cross-check made of a result.
type crossOutcome int

const (
	crossAwaiting  crossOutcome = iota // the first answer, kept: another identity's copy is published
	crossParked                        // the first answer, kept, and no other identity has answered: no copy yet (taskTable.parked)
	crossReferred                      // the task went to the referee
	crossConfirmed                     // two identities agree: the entries are stored
	crossSkipped                       // stored on the sender's word alone: nobody else answers
)

// crossCheck decides a result r, with entries es, of cross-checked task
// index: the entries to store once two identities agree (or the check is
// skipped), none while a second opinion is awaited or when the task goes
// to the referee.
func (t *trust) crossCheck(index int, r *queue.Result, es []book.Entry) ([]book.Entry, crossOutcome) {
	first, ok := t.cross.firstResults[index]
	if !ok {
		t.cross.firstResults[index] = queue.Result{WorkerID: r.WorkerID, TaskID: r.TaskID, Scores: slices.Clone(r.Scores)}
		if !t.otherIdentity(r.WorkerID) {
			return nil, crossParked
		}
		return nil, crossAwaiting
	}
	if first.WorkerID == r.WorkerID {
		// Two copies answered by one identity: no cross-check.
		if !t.otherIdentity(r.WorkerID) {
			// No other worker has answered in this run: there is nobody
			// to check against.
			delete(t.cross.firstResults, index)
			t.sum.CrossSkipped++
			t.log.Debug("cross-check skipped: no other worker has answered in this run", "task", index, "worker", r.WorkerID)
			return es, crossSkipped
		}
		if t.tasks.copies[index] < maxCrossCopies {
			return nil, crossAwaiting // another worker must solve a new copy
		}
		// Other workers answer, but none took a copy of this task: the
		// coordinator checks.
		delete(t.cross.firstResults, index)
		t.cross.refer(&refereeCase{index: index, keys: slices.Clone(r.Keys), answers: []queue.Result{answer(r)}, nodes: r.Nodes})
		return nil, crossReferred
	}
	delete(t.cross.firstResults, index)
	if slices.Equal(first.Scores, r.Scores) {
		t.sum.CrossChecked++
		t.crossResult(first.WorkerID, first.TaskID, true, nil)
		t.crossResult(r.WorkerID, r.TaskID, true, nil)
		return es, crossConfirmed
	}
	t.log.Warn("cross-check: two workers disagree; the coordinator solves the task", "task", index, "workers", []string{first.WorkerID, r.WorkerID})
	t.cross.refer(&refereeCase{index: index, keys: slices.Clone(r.Keys), answers: []queue.Result{first, answer(r)}, nodes: r.Nodes})
	return nil, crossReferred
}

// compareDuplicate compares result r (its keys and scores) of task index,
// done already, with the scores the book holds for it, stored, and
// reports whether they differ: the task then goes to the referee, the
// answer that stored the scores (if it was given in this run) and r its
// case's answers, whose verdict replaces the stored scores. A copy of a
// task answered twice (an overdue or tail copy, a redelivery) is so a
// cross-check that costs nothing: a worker that lies, or a machine that
// errs, on the job's last tasks is caught as it would be on the
// cross-checked fraction.
func (t *trust) compareDuplicate(index int, r *queue.Result, stored []int8) bool {
	t.sum.Compared++
	if slices.Equal(r.Scores, stored) {
		return false
	}
	var answers []queue.Result
	storedBy := "" // not in this run, or by the coordinator
	if k := t.tasks.by[index]; k != 0 {
		storedBy = t.identityNames[k-1]
		answers = append(answers, queue.Result{WorkerID: storedBy, Scores: slices.Clone(stored)})
	}
	answers = append(answers, answer(r))
	t.log.Warn("a task answered again with other scores than the book holds; the coordinator solves the task", "task", index, "worker", r.WorkerID, "stored_by", storedBy)
	t.cross.refer(&refereeCase{index: index, keys: slices.Clone(r.Keys), answers: answers, stored: slices.Clone(stored)})
	return true
}

// unparkFor unparks the parked tasks whose first answer is not worker's:
// worker, an identity whose first result was just accepted, can check
// them (crossChecks.unparked, which the job publishes again).
func (t *trust) unparkFor(worker string) {
	for i, r := range t.cross.firstResults {
		if t.tasks.parked[i] && r.WorkerID != worker {
			t.cross.unparked = append(t.cross.unparked, i)
		}
	}
	slices.Sort(t.cross.unparked)
}

// takeUnparked returns the tasks unparked since the last call.
func (t *trust) takeUnparked() []int {
	out := t.cross.unparked
	t.cross.unparked = nil
	return out
}

// parkedEntries returns the entries of the parked tasks, each on the word
// of its first answer, and their indexes, in order: the run has nothing
// else left, and no other identity answered to check them. Each counts
// as a check skipped and is credited to its sender.
func (t *trust) parkedEntries() ([]book.Entry, []int, error) {
	var indexes []int
	for i := range t.cross.firstResults {
		if t.tasks.parked[i] {
			indexes = append(indexes, i)
		}
	}
	slices.Sort(indexes)
	var entries []book.Entry
	for _, i := range indexes {
		r := t.cross.firstResults[i]
		keys, err := t.tasks.keys(i)
		if err != nil {
			return nil, nil, err
		}
		if len(keys) != len(r.Scores) {
			return nil, nil, fmt.Errorf("task %d: %d scores kept for %d positions", i, len(r.Scores), len(keys))
		}
		n := t.workerNumber(r.WorkerID)
		for k, key := range keys {
			p, err := t.board.PositionFromKey(key)
			if err != nil {
				return nil, nil, err
			}
			entries = append(entries, book.EntryOf(p, book.Value{Score: int(r.Scores[k]), Origin: book.OriginSolved, Worker: n}))
		}
		delete(t.cross.firstResults, i)
		t.sum.CrossSkipped++
		t.credit(i, r.WorkerID, int64(len(keys)), true)
	}
	return entries, indexes, nil
}

// answer returns what a cross-check keeps of result r: its sender, task
// and scores.
func answer(r *queue.Result) queue.Result {
	return queue.Result{WorkerID: r.WorkerID, TaskID: r.TaskID, Scores: slices.Clone(r.Scores)}
}

// crossResult counts a cross-check of a result of worker: passed, or
// failed, and then the result, accepted when it came, is rejected, and
// the worker quarantined: the coordinator's own solver found its scores
// wrong.
func (t *trust) crossResult(worker string, task uint64, passed bool, reason error) {
	if passed {
		t.count(worker, func(c *queue.WorkerResults) { c.CrossPassed++ })
		return
	}
	t.count(worker, func(c *queue.WorkerResults) {
		c.CrossFailed++
		if c.Accepted > 0 {
			c.Accepted--
		}
	})
	t.reject(worker, task, reason)
	t.quarantineForJob(worker, "failed a cross-check: "+reason.Error())
}

// The referee. The coordinator solves a cross-checked task itself when
// two workers disagree, or when one identity answered maxCrossCopies
// copies of it, and a task done when an answer of it again differs from
// the scores stored (compareDuplicate). Such a solve takes up to minutes
// (a task of 64 leaves at depth 8), and the job must not wait for it: a
// worker that keeps causing them would stall the collecting goroutine,
// and with it every result, ack, status and overdue task of the job. So
// the referee is a goroutine of its own, with its own solver, that solves
// one task at a time; everything else stays on the collecting goroutine:
//
//   - trust makes a case of the task (refer): its keys and the answers the
//     verdict judges. Cases wait in line (crossChecks.line); the one the
//     referee solves (judging) is sent to it, and its verdict, the
//     entries or the solve's error, comes back on a channel, which the
//     collecting loop watches beside the results (job.solve).
//   - The job marks the task as being refereed (taskTable.refereeing):
//     not needed, so no copy of it is published, overdue or stranded,
//     and a result for it is a duplicate (acked, not stored); not done,
//     so the job waits for the verdict.
//   - The answers of a case passed the checks when they came, and were
//     acked then, as the first answer of any cross-check is: their scores
//     wait in the case. A coordinator stopped before the verdict solves
//     the task again in its next run (cross-checks are the run's).
//   - The verdict is applied on the collecting goroutine (decide,
//     job.verdict): the answers' cross-checks passed or failed (and the
//     quarantines that follow), the counts, the coordinator's entries
//     written, the task done. A solve that did not finish gives no entry
//     (solver.Solver.SolveContext): its error stops the job.
//   - A task has one case at most (a task being refereed is not
//     needed), so the line is no longer than the tasks out. A case
//     waiting in line with an answer of a worker quarantined meanwhile is
//     void (voidCases): its task is published again, the other answer, if
//     any, kept as the first of a new cross-check. So the disagreements a
//     liar made while the referee solved cost no solve once one verdict
//     has caught it.

// crossChecks are the cross-checks under way, which trust keeps on the
// collecting goroutine: the first answers awaiting another identity's,
// and the cases of the referee, in line or being judged.
type crossChecks struct {
	firstResults map[int]queue.Result // cross-checked tasks: the first result, awaiting another worker's
	requeued     []int                // tasks whose first result, or case for the referee, a quarantine voided
	unparked     []int                // tasks parked (taskTable.parked) that a new identity can check now
	referee      *referee             // the coordinator's own solver, in its goroutine (startReferee)
	line         []*refereeCase       // cases in line for the referee
	judging      *refereeCase         // the case the referee solves, or nil
}

// refereeCase is a task the referee solves, and the answers its verdict
// judges.
type refereeCase struct {
	index   int
	keys    []uint64       // of the task's positions
	answers []queue.Result // the two that disagree, or the one of an identity that answered every copy
	nodes   uint64         // searched by the answer that made the case: Summary.Nodes
	// stored, for a task done answered again with other scores
	// (compareDuplicate), is the scores the book holds: the verdict
	// replaces them.
	stored []int8
}

// verdict is what the referee made of the case it was sent: the task's
// entries, or the error that stopped its solve (then no entry at all).
type verdict struct {
	entries []book.Entry
	err     error
}

// referee solves tasks with the coordinator's own solver, in a goroutine
// of its own (run), one at a time. It knows nothing of the job: it takes
// a task's keys and gives back its entries.
type referee struct {
	board    *solver.Board
	bytes    int64                                          // the solver's table; made at the first solve
	gate     func(ctx context.Context, keys []uint64) error // Config.refereeGate, or nil
	cases    chan []uint64                                  // the keys of a task to solve
	verdicts chan verdict                                   // one for each case, in order
	done     chan struct{}                                  // closed when run has returned
}

// startReferee starts the referee's goroutine, which ends when ctx is
// done or stop is called; stop returns once it has ended. A solve under
// way when it stops gives an error verdict, which nobody reads.
func (t *trust) startReferee(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	// One case at a time is sent (refer, decide): a buffer of one never
	// lets either side wait for the other.
	r := &referee{board: t.board, bytes: t.refereeBytes, gate: t.gate, cases: make(chan []uint64, 1), verdicts: make(chan verdict, 1),
		done: make(chan struct{})}
	t.cross.referee = r
	go r.run(ctx)
	return func() {
		cancel()
		<-r.done
	}
}

// run solves the cases sent, one after the other, until ctx is done.
func (r *referee) run(ctx context.Context) {
	defer close(r.done)
	var s *solver.Solver
	for {
		select {
		case <-ctx.Done():
			return
		case keys := <-r.cases:
			var v verdict
			v.entries, v.err = r.solve(ctx, &s, keys)
			select {
			case r.verdicts <- v:
			case <-ctx.Done():
				return
			}
		}
	}
}

// solve solves the positions keys with *s, made first if nil, and returns
// their entries.
func (r *referee) solve(ctx context.Context, s **solver.Solver, keys []uint64) ([]book.Entry, error) {
	if r.gate != nil {
		if err := r.gate(ctx, keys); err != nil {
			return nil, err
		}
	}
	if *s == nil {
		made, err := solver.New(r.board, r.bytes)
		if err != nil {
			return nil, err
		}
		*s = made
	}
	entries := make([]book.Entry, 0, len(keys))
	for _, k := range keys {
		p, err := r.board.PositionFromKey(k)
		if err != nil {
			return nil, err
		}
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve): an error gives no entry at all.
		v, err := (*s).SolveContext(ctx, p)
		if err != nil {
			return nil, err
		}
		entries = append(entries, book.EntryOf(p, book.Value{Score: v, Origin: book.OriginSolved}))
	}
	return entries, nil
}

// refer puts case c in line for the referee, and sends it at once if the
// referee is idle.
func (x *crossChecks) refer(c *refereeCase) {
	x.line = append(x.line, c)
	x.sendCase()
}

// sendCase sends the first case in line to the referee, if it is idle.
func (x *crossChecks) sendCase() {
	if x.judging != nil || len(x.line) == 0 {
		return
	}
	x.judging = x.line[0]
	x.line[0] = nil
	x.line = x.line[1:]
	x.referee.cases <- x.judging.keys // never waits: see startReferee
}

// verdicts returns the channel of the referee's verdicts: nil (never
// ready) if it is not started.
func (x *crossChecks) verdicts() <-chan verdict {
	if x.referee == nil {
		return nil
	}
	return x.referee.verdicts
}

// awaitingVerdicts reports whether a case is with the referee or in line.
func (x *crossChecks) awaitingVerdicts() bool { return x.judging != nil || len(x.line) > 0 }

// refereed is what a verdict decides: the task, and its entries to
// store, the coordinator's.
type refereed struct {
	index   int
	entries []book.Entry
	nodes   uint64 // Summary.Nodes
	recheck bool   // the task was done: its entries replace those stored (compareDuplicate)
}

// decide applies verdict v, of the case the referee judged: each answer
// passes its cross-check or fails it (its worker quarantined), the task
// is credited to the last answer's worker if it is not quarantined, and
// the next case in line is sent. A verdict's error is the job's: the
// referee could not solve (the job stopped).
func (t *trust) decide(v verdict) (refereed, error) {
	c := t.cross.judging
	t.cross.judging = nil
	if v.err != nil {
		return refereed{}, fmt.Errorf("the coordinator solving task %d of a cross-check: %w", c.index, v.err)
	}
	t.sum.Refereed++
	if len(c.answers) > 1 || c.stored != nil || !sameScores(v.entries, c.answers[0].Scores) {
		t.sum.Disagreements++
	} else {
		t.sum.CrossChecked++
	}
	if c.stored != nil && !sameScores(v.entries, c.stored) {
		t.log.Error("the book held scores of a task that the coordinator's solver does not give: replaced by its own", "task", c.index)
	}
	for _, a := range c.answers {
		var reason error
		if !sameScores(v.entries, a.Scores) {
			reason = fmt.Errorf("task %d: cross-check: scores differ from the coordinator's", c.index)
		}
		t.crossResult(a.WorkerID, a.TaskID, reason == nil, reason)
	}
	// A task done is credited anew only if it was credited in this run.
	if n := int64(len(v.entries)); c.stored == nil || t.uncredit(c.index, n) {
		t.credit(c.index, c.answers[len(c.answers)-1].WorkerID, n, false)
	}
	t.cross.sendCase()
	return refereed{index: c.index, entries: v.entries, nodes: c.nodes, recheck: c.stored != nil}, nil
}

// voidCases voids the cases in line (not the one the referee solves)
// with an answer of worker, just quarantined: each task is published
// again (toSolveAgain), the other worker's answer, if any, kept as the
// first answer of its cross-check. A case of a task done answered again
// (compareDuplicate) is void only when worker gave the new answer: the
// stored scores stand, and the task stays done. When worker stored them,
// the case stays in line (and the task is solved again too if they were
// on worker's word alone: toSolveAgain).
func (t *trust) voidCases(worker string) {
	kept := t.cross.line[:0]
	for _, c := range t.cross.line {
		if c.stored != nil {
			if c.answers[len(c.answers)-1].WorkerID != worker {
				kept = append(kept, c)
			} else {
				t.cross.requeued = append(t.cross.requeued, c.index)
			}
			continue
		}
		if !slices.ContainsFunc(c.answers, func(a queue.Result) bool { return a.WorkerID == worker }) {
			kept = append(kept, c)
			continue
		}
		for _, a := range c.answers {
			if !t.quarantined[a.WorkerID] {
				t.cross.firstResults[c.index] = a
			}
		}
		t.cross.requeued = append(t.cross.requeued, c.index)
	}
	clear(t.cross.line[len(kept):])
	t.cross.line = kept
}

// sameScores reports whether entries hold the scores, in order.
func sameScores(entries []book.Entry, scores []int8) bool {
	if len(entries) != len(scores) {
		return false
	}
	for i, e := range entries {
		if e.Score != int(scores[i]) {
			return false
		}
	}
	return true
}
