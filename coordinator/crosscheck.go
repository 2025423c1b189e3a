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
// for when two answers disagree.

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
// first copies only). Ids stay distinct for maxCopies copies.
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

// crossCheck decides a result r, with entries es, of cross-checked task
// index: the entries to store and decided once two identities agree (or
// the coordinator has decided, or the check is skipped), not decided while
// a second opinion is awaited. oneWord is true when the entries are stored
// on the word of r's sender alone (a skipped check).
func (t *trust) crossCheck(ctx context.Context, index int, r *queue.Result, es []book.Entry) (entries []book.Entry, decided, oneWord bool, err error) {
	first, ok := t.firstResults[index]
	if !ok {
		t.firstResults[index] = queue.Result{WorkerID: r.WorkerID, TaskID: r.TaskID, Scores: slices.Clone(r.Scores)}
		return nil, false, false, nil
	}
	if first.WorkerID == r.WorkerID {
		// Two copies answered by one identity: no cross-check.
		if !t.otherIdentity(r.WorkerID) {
			// No other worker has answered in this run: there is nobody
			// to check against.
			delete(t.firstResults, index)
			t.sum.CrossSkipped++
			t.log.Debug("cross-check skipped: no other worker has answered in this run", "task", index, "worker", r.WorkerID)
			return es, true, true, nil
		}
		if t.tasks.copies[index] < maxCrossCopies {
			return nil, false, false, nil // another worker must solve a new copy
		}
		// Other workers answer, but none took a copy of this task: the
		// coordinator checks.
		truth, err := t.referee(ctx, index)
		if err != nil {
			return nil, false, false, err
		}
		t.sum.Refereed++
		delete(t.firstResults, index)
		if sameScores(truth, r.Scores) {
			t.sum.CrossChecked++
			t.crossResult(r.WorkerID, r.TaskID, true, nil)
		} else {
			t.sum.Disagreements++
			t.crossResult(r.WorkerID, r.TaskID, false, fmt.Errorf("task %d: scores differ from the coordinator's", index))
		}
		return truth, true, false, nil
	}
	delete(t.firstResults, index)
	if slices.Equal(first.Scores, r.Scores) {
		t.sum.CrossChecked++
		t.crossResult(first.WorkerID, first.TaskID, true, nil)
		t.crossResult(r.WorkerID, r.TaskID, true, nil)
		return es, true, false, nil
	}
	t.sum.Disagreements++
	t.log.Warn("cross-check: two workers disagree; the coordinator solves the task", "task", index, "workers", []string{first.WorkerID, r.WorkerID})
	truth, err := t.referee(ctx, index)
	if err != nil {
		return nil, false, false, err
	}
	t.sum.Refereed++
	for _, res := range []*queue.Result{&first, r} {
		ok := sameScores(truth, res.Scores)
		var reason error
		if !ok {
			reason = fmt.Errorf("task %d: cross-check: scores differ from the coordinator's", index)
		}
		t.crossResult(res.WorkerID, res.TaskID, ok, reason)
	}
	return truth, true, false, nil
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

// referee solves task index with the coordinator's own solver.
func (t *trust) referee(ctx context.Context, index int) ([]book.Entry, error) {
	b := t.board
	if t.refereeSolver == nil {
		s, err := solver.New(b, t.refereeBytes)
		if err != nil {
			return nil, err
		}
		t.refereeSolver = s
	}
	var entries []book.Entry
	keys, err := t.tasks.keys(index)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, err
		}
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve): an error gives no entry at all.
		v, err := t.refereeSolver.SolveContext(ctx, p)
		if err != nil {
			return nil, err
		}
		entries = append(entries, book.EntryOf(p, book.Value{Score: v, Origin: book.OriginSolved}))
	}
	return entries, nil
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
