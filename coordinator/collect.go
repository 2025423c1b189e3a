package coordinator

import (
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Task ids. A task's id is the run of the coordinator that published it,
// the copy of the task within the run, and its index in the job's plan:
//
//	 63        48 47     40 39                       0
//	+------------+---------+--------------------------+
//	|    run     |  copy   |   index in the plan      |
//	+------------+---------+--------------------------+
//
// The plan's leaves file is the same in every run, so with the same task
// size the index names the same positions in every run. Run and copy make the message id of every publication of a
// task new: the stream drops a message whose id it saw within its
// duplicate window. A task is published again (a new copy) when its result
// was rejected, when its first answer comes if it is cross-checked, and
// when it is overdue (overdue.go).
const (
	taskIndexBits = 40
	taskCopyBits  = 8
	taskIndexMask = 1<<taskIndexBits - 1
	taskCopyMask  = 1<<taskCopyBits - 1
	maxRuns       = 1<<(64-taskIndexBits-taskCopyBits) - 1
	maxCopies     = taskCopyMask
)

// taskID returns the id of copy of task index published by run.
func taskID(run, copy, index int) uint64 {
	return uint64(run)<<(taskIndexBits+taskCopyBits) | uint64(copy)<<taskIndexBits | uint64(index)
}

// splitTaskID returns the run, copy and plan index of a task id.
func splitTaskID(id uint64) (run, copy, index int) {
	return int(id >> (taskIndexBits + taskCopyBits)), int(id >> taskIndexBits & taskCopyMask), int(id & taskIndexMask)
}

// checkResult returns the book entries of result r of a task of the
// running job, or an error saying why the result is rejected: a task this
// job never issued, positions other than the task's, a score no position
// of that depth can have, or a win at once (a leaf that makes four at once
// is scored while planning, never solved). run is the current run.
func checkResult(b *solver.Board, tasks *taskTable, run int, r *queue.Result) ([]book.Entry, error) {
	taskRun, _, index := splitTaskID(r.TaskID)
	if taskRun < 1 || taskRun > run || index >= tasks.Len() {
		return nil, fmt.Errorf("task %d (run %d, index %d) was not issued", r.TaskID, taskRun, index)
	}
	if err := tasks.checkKeys(index, r.Keys); err != nil {
		return nil, err
	}
	if len(r.Scores) != len(r.Keys) {
		return nil, fmt.Errorf("task %d: %d scores for %d positions", index, len(r.Scores), len(r.Keys))
	}
	entries := make([]book.Entry, len(r.Keys))
	for i, k := range r.Keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, fmt.Errorf("task %d: %w", index, err) // not from this plan: cannot happen
		}
		score := int(r.Scores[i])
		lo, hi := b.ScoreRange(p.Moves())
		if hi = b.WinNowScore(p.Moves()) - 1; score < lo || score > hi {
			return nil, fmt.Errorf("task %d: position %d scored %d, outside [%d, %d] for %d stones that do not make four at once", index, i, score, lo, hi, p.Moves())
		}
		entries[i] = book.EntryOf(p, book.Value{Score: score, Origin: book.OriginSolved})
	}
	return entries, nil
}
