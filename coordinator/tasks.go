package coordinator

import (
	"fmt"
	"iter"

	"github.com/c4book/c4book/book"
)

// taskTable is the state of a job's tasks in a run. Task i is the leaves
// [i*size, (i+1)*size) of the plan's leaves in the job's order (see
// MakePlan), which is the same in every run: its keys are read from the
// plan when needed, and the table holds a few bytes a task, whatever the
// job's size.
type taskTable struct {
	leaves  *jobLeaves
	size    int64
	n       int
	done    []bool   // its positions are in the book
	failed  []bool   // given up on
	copies  []uint8  // copies published in this run that count (see answered)
	serial  []uint16 // copies published in this run, the next one's number (wraps)
	out     []uint8  // copies published in this run without a result yet
	by      []int32  // done in this run: the number in the run of the worker credited with it (trust.solvedBy), 0 if none
	alone   []bool   // done in this run on that worker's word alone (no cross-check confirmed it)
	pending int      // tasks neither done nor failed

	// Being solved by the coordinator's referee (crosscheck.go), which
	// will decide it: not needed (no copy of it is published) and not
	// done (pending counts it).
	refereeing []bool

	// Parked: cross-checked, its first answer kept, awaiting another
	// identity than its sender's when none has answered in the run
	// (crossChecks): not needed, so that a worker alone does not solve
	// copies that nobody can check, and not done. A new identity's first
	// result unparks it; a run left with parked tasks alone stores them
	// on their first answers (job.storeParked).
	parked  []bool
	nParked int

	// The keys of the tasks published and not done yet, read from the
	// plan once for their publishing and their results' checks (a task's
	// leaves are scattered over the plan's key-ordered leaves file: a read
	// each).
	keysOut map[int][]uint64
}

// newTaskTable returns the tasks of size positions of the leaves, none
// done yet.
func newTaskTable(leaves *jobLeaves, size int) *taskTable {
	n := int((leaves.Len() + int64(size) - 1) / int64(size))
	return &taskTable{
		leaves:  leaves,
		size:    int64(size),
		n:       n,
		done:    make([]bool, n),
		failed:  make([]bool, n),
		copies:  make([]uint8, n),
		serial:  make([]uint16, n),
		out:     make([]uint8, n),
		by:      make([]int32, n),
		alone:   make([]bool, n),
		pending: n,

		refereeing: make([]bool, n),
		parked:     make([]bool, n),
		keysOut:    map[int][]uint64{},
	}
}

// Len returns the number of tasks.
func (t *taskTable) Len() int { return t.n }

// bounds returns the leaf indexes [from, to) of task i.
func (t *taskTable) bounds(i int) (from, to int64) {
	from = int64(i) * t.size
	return from, min(from+t.size, t.leaves.Len())
}

// positions returns the number of positions of task i.
func (t *taskTable) positions(i int) int64 {
	from, to := t.bounds(i)
	return to - from
}

// keys returns the position keys of task i; the caller must not change
// them.
func (t *taskTable) keys(i int) ([]uint64, error) {
	if keys, ok := t.keysOut[i]; ok {
		return keys, nil
	}
	from, to := t.bounds(i)
	return t.leaves.Keys(make([]uint64, 0, to-from), from, to)
}

// publishedKeys returns the keys of task i, kept until it is done or
// failed: its results are checked against them.
func (t *taskTable) publishedKeys(i int) ([]uint64, error) {
	keys, err := t.keys(i)
	if err == nil && !t.done[i] && !t.failed[i] {
		t.keysOut[i] = keys
	}
	return keys, err
}

// setDone marks task i done.
func (t *taskTable) setDone(i int) {
	if t.done[i] {
		return
	}
	t.done[i] = true
	delete(t.keysOut, i)
	if !t.failed[i] {
		t.pending-- // a failed task's late result is welcome, already counted
	}
}

// setFailed marks task i given up on.
func (t *taskTable) setFailed(i int) {
	if t.done[i] || t.failed[i] {
		return
	}
	t.failed[i] = true
	delete(t.keysOut, i)
	t.pending--
}

// reopen marks task i, done or failed, as needing a result again.
func (t *taskTable) reopen(i int) {
	if !t.done[i] && !t.failed[i] {
		return
	}
	t.done[i], t.failed[i], t.by[i], t.alone[i] = false, false, 0, false
	t.pending++
}

// needed reports whether task i still needs a result: neither done, nor
// failed, nor being refereed, nor parked.
func (t *taskTable) needed(i int) bool {
	return i < t.n && !t.done[i] && !t.failed[i] && !t.refereeing[i] && !t.parked[i]
}

// setParked parks task i (on) or unparks it, and reports whether that
// changed anything.
func (t *taskTable) setParked(i int, on bool) bool {
	if t.parked[i] == on {
		return false
	}
	t.parked[i] = on
	if on {
		t.nParked++
	} else {
		t.nParked--
	}
	return true
}

// published counts a copy of task i published, and returns its number
// in the run (wrapping at 65,536: see taskid.go).
func (t *taskTable) published(i int) (serial int) {
	serial = int(t.serial[i])
	t.serial[i]++
	t.copies[i]++
	t.out[i]++
	return serial
}

// answered counts a result of task i against its copies out. A result
// whose sender is quarantined (counted false) takes back the count of its
// copy: a task is given up on after maxCopies counted copies without an
// accepted result, and a cross-check refereed after maxCrossCopies, and a
// quarantined worker that goes on taking tasks (it can, on an external
// server) answers copy after copy, each ignored and published again at
// once; counted, they would make a task fail in a fraction of a second,
// the quarantined worker deciding what the job gives up on.
func (t *taskTable) answered(i int, counted bool) {
	if i >= t.n {
		return
	}
	if t.out[i] > 0 {
		t.out[i]--
	}
	if !counted && t.copies[i] > 0 {
		t.copies[i]--
	}
}

// leavesLeft returns the number of positions of the tasks not done, and of
// all tasks.
func (t *taskTable) leavesLeft() (left, total int64) {
	for i := range t.n {
		if !t.done[i] {
			left += t.positions(i)
		}
	}
	return left, t.leaves.Len()
}

// markHeld marks done every task whose positions held yields all: the
// book's entries of the leaves' depth, in key order.
func (t *taskTable) markHeld(held iter.Seq2[book.Entry, error]) error {
	has, err := t.leaves.having(held, func(book.Entry) bool { return true })
	if err != nil {
		return err
	}
	for i := range t.n {
		from, to := t.bounds(i)
		all := true
		for o := from; o < to && all; o++ {
			all = has.has(o)
		}
		if all {
			t.setDone(i)
		}
	}
	return nil
}

// tasksWith returns the tasks with an entry of held (the book's entries
// of the leaves' depth, in key order) that match: the tasks to solve again
// when match finds a quarantined worker's entries.
func (t *taskTable) tasksWith(held iter.Seq2[book.Entry, error], match func(book.Entry) bool) ([]int, error) {
	has, err := t.leaves.having(held, match)
	if err != nil {
		return nil, err
	}
	var tasks []int
	for i := range t.n {
		from, to := t.bounds(i)
		for o := from; o < to; o++ {
			if has.has(o) {
				tasks = append(tasks, i)
				break
			}
		}
	}
	return tasks, nil
}

// checkKeys reports an error unless keys are the keys of task i.
func (t *taskTable) checkKeys(i int, keys []uint64) error {
	if i >= t.n {
		return fmt.Errorf("task %d: the plan has %d tasks", i, t.n)
	}
	want, err := t.keys(i)
	if err != nil {
		return err
	}
	if len(keys) != len(want) {
		return fmt.Errorf("task %d: the result's %d positions are not the task's %d", i, len(keys), len(want))
	}
	for j := range keys {
		if keys[j] != want[j] {
			return fmt.Errorf("task %d: the result's position %d is not the task's", i, j)
		}
	}
	return nil
}
