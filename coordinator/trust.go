package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Trust. Workers may be wrong (a bad machine, a bug) or lie (anyone who
// can publish on the server). A result is checked against the task the
// coordinator issued (checkResult); beyond that:
//
//   - Quarantine: a worker whose results were rejected QuarantineAfter
//     times is quarantined: its results are ignored from then on (and the
//     tasks they were for published again), and it is shown in the job's
//     status.
//   - Cross-checking: a fraction of the tasks (CrossCheck) is published
//     twice, and their scores are stored only once two different workers
//     agree. When they disagree, the coordinator solves the task itself,
//     stores its scores, and counts a rejection against each worker that
//     was wrong. When one worker took both copies, the task is published
//     again for another; after maxCrossCopies copies without a second
//     worker, the coordinator checks the result itself.

// maxCrossCopies is how many copies of a cross-checked task are published
// in one run before the coordinator checks the result itself.
const maxCrossCopies = 4

// crossChecked reports whether task index is one of the cross-checked
// fraction: a fixed, well spread choice by index.
func (j *job) crossChecked(index int) bool {
	if j.cfg.CrossCheck <= 0 {
		return false
	}
	h := uint64(index+1) * 0x9E3779B97F4A7C15
	return float64(h>>11)/(1<<53) < j.cfg.CrossCheck
}

// copiesAtStart is the number of copies of task index published when a run
// starts.
func (j *job) copiesAtStart(index int) int {
	if j.crossChecked(index) {
		return 2
	}
	return 1
}

// reject counts a rejected result against worker, and quarantines the
// worker when it has been rejected too often.
func (j *job) reject(worker string, task uint64, reason error) {
	j.summary.Rejected++
	j.rejections[worker]++
	j.count(worker, func(c *queue.WorkerResults) { c.Rejected++ })
	if j.cfg.OnResult != nil {
		j.cfg.OnResult(worker, false)
	}
	j.log.Warn("result rejected", "worker", worker, "task", task, "reason", reason)
	if j.rejections[worker] >= j.cfg.QuarantineAfter && !j.quarantined[worker] {
		j.quarantine(worker)
		j.log.Error("worker quarantined: its results are ignored from now on", "worker", worker, "rejected", j.rejections[worker])
		// The job's record keeps it: a coordinator run again ignores the
		// worker from the start.
		j.record.Quarantined = append(j.record.Quarantined, worker)
		if err := j.save(j.record.State, j.record.Message); err != nil {
			j.log.Warn("storing the quarantine in the job record", "worker", worker, "error", err)
		}
	}
}

// count updates the counts of worker's results (Summary.Workers).
func (j *job) count(worker string, update func(*queue.WorkerResults)) {
	j.countsMu.Lock()
	defer j.countsMu.Unlock()
	if j.summary.Workers == nil {
		j.summary.Workers = map[string]queue.WorkerResults{}
	}
	c := j.summary.Workers[worker]
	update(&c)
	j.summary.Workers[worker] = c
}

// crossResult counts a cross-check of a result of worker: passed, or
// failed, and then the result, accepted when it came, is rejected.
func (j *job) crossResult(worker string, task uint64, passed bool, reason error) {
	if passed {
		j.count(worker, func(c *queue.WorkerResults) { c.CrossPassed++ })
		return
	}
	j.count(worker, func(c *queue.WorkerResults) {
		c.CrossFailed++
		if c.Accepted > 0 {
			c.Accepted--
		}
	})
	j.reject(worker, task, reason)
}

// workerNumber returns the number of the registered worker name (active
// or removed), or 0 if name is not a registered worker's: a worker with
// a key has its name for its subject, so the number is the key's; a
// worker without a key names itself, and only a registered name gets a
// number. A number found is kept for the run; a name not found is looked
// up again at its next result (it may be registered meanwhile).
func (j *job) workerNumber(name string) uint32 {
	if n, ok := j.numbers[name]; ok {
		return n
	}
	w, ok, err := j.cfg.Book.Worker(name)
	if err != nil {
		j.log.Warn("looking up a worker's number: its results are stored without it", "worker", name, "error", err)
		return 0
	}
	if !ok {
		return 0
	}
	j.numbers[name] = w.Number
	return w.Number
}

// quarantine ignores worker's results from now on.
func (j *job) quarantine(worker string) {
	j.quarantined[worker] = true
	j.summary.Quarantined = append(j.summary.Quarantined, worker)
}

// crossCheck decides a result r, with entries es, of cross-checked task
// index: the entries to store and true once two workers agree (or the
// coordinator has decided), false while a second opinion is awaited.
func (j *job) crossCheck(ctx context.Context, index int, r *queue.Result, es []book.Entry) ([]book.Entry, bool, error) {
	first, ok := j.firstResults[index]
	if !ok {
		j.firstResults[index] = queue.Result{WorkerID: r.WorkerID, TaskID: r.TaskID, Scores: slices.Clone(r.Scores)}
		return nil, false, nil
	}
	if first.WorkerID == r.WorkerID {
		if j.tasks.copies[index] < maxCrossCopies {
			return nil, false, nil // another worker must solve a new copy
		}
		// No other worker came: the coordinator checks.
		truth, err := j.referee(ctx, index)
		if err != nil {
			return nil, false, err
		}
		if sameScores(truth, r.Scores) {
			j.summary.CrossChecked++
			j.crossResult(r.WorkerID, r.TaskID, true, nil)
		} else {
			j.summary.Disagreements++
			j.crossResult(r.WorkerID, r.TaskID, false, fmt.Errorf("task %d: scores differ from the coordinator's", index))
		}
		delete(j.firstResults, index)
		return truth, true, nil
	}
	delete(j.firstResults, index)
	if slices.Equal(first.Scores, r.Scores) {
		j.summary.CrossChecked++
		j.crossResult(first.WorkerID, first.TaskID, true, nil)
		j.crossResult(r.WorkerID, r.TaskID, true, nil)
		return es, true, nil
	}
	j.summary.Disagreements++
	j.log.Warn("cross-check: two workers disagree; the coordinator solves the task", "task", index, "workers", []string{first.WorkerID, r.WorkerID})
	truth, err := j.referee(ctx, index)
	if err != nil {
		return nil, false, err
	}
	for _, res := range []*queue.Result{&first, r} {
		ok := sameScores(truth, res.Scores)
		var reason error
		if !ok {
			reason = fmt.Errorf("task %d: cross-check: scores differ from the coordinator's", index)
		}
		j.crossResult(res.WorkerID, res.TaskID, ok, reason)
	}
	return truth, true, nil
}

// referee solves task index with the coordinator's own solver.
func (j *job) referee(ctx context.Context, index int) ([]book.Entry, error) {
	b := j.cfg.Spec.Board
	if j.refereeSolver == nil {
		s, err := solver.New(b, j.cfg.RefereeTableBytes)
		if err != nil {
			return nil, err
		}
		j.refereeSolver = s
	}
	var entries []book.Entry
	keys, err := j.tasks.keys(index)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, err
		}
		v, err := j.refereeSolver.SolveContext(ctx, p)
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

// publishAgain publishes a new copy of each task of indexes that is not
// done, in one call. A task that ran out of copies is given up on.
func (j *job) publishAgain(ctx context.Context, indexes []int) error {
	slices.Sort(indexes)
	indexes = slices.Compact(indexes)
	var tasks []queue.Task
	for _, i := range indexes {
		if !j.tasks.needed(i) {
			continue
		}
		if j.tasks.copies[i] >= maxCopies {
			j.closed(i)
			j.tasks.setFailed(i)
			j.log.Error("task given up on: published the most times without an accepted result", "task", i, "positions", j.moves(i))
			continue
		}
		t, err := j.taskMsg(i)
		if err != nil {
			return err
		}
		tasks = append(tasks, t)
	}
	return j.publish(ctx, tasks)
}

// taskMsg returns the next copy of task index of this run, ready to
// publish, and counts it published.
func (j *job) taskMsg(index int) (queue.Task, error) {
	keys, err := j.tasks.keys(index)
	if err != nil {
		return queue.Task{}, err
	}
	b := j.cfg.Spec.Board
	t := queue.Task{JobID: j.id, TaskID: taskID(j.runNo, int(j.tasks.copies[index]), index),
		Width: uint8(b.Width()), Height: uint8(b.Height()), Keys: keys}
	j.tasks.published(index)
	return t, nil
}
