package coordinator

// Task ids. A task's id is the run of the coordinator that published it,
// the copy of the task within the run, and its index in the job's plan:
//
//	 63        48 47              32 31                 0
//	+------------+------------------+--------------------+
//	|    run     |       copy       |  index in the plan |
//	+------------+------------------+--------------------+
//
// The plan's leaves file is the same in every run, so with the same task
// size the index names the same positions in every run. Run and copy make
// the message id of every publication of a task new: the stream drops a
// message whose id it saw within its duplicate window. A task is published
// again (a new copy) when its result was rejected or ignored, when its
// first answer comes if it is cross-checked, and when it is overdue
// (overdue.go). The copy field wraps: 65,536 copies of one task within the
// duplicate window (queue.DuplicateWindow, 20 s) would be needed to reuse
// an id while the stream remembers it.
//
// The copy had 8 bits and the index 40 until a copy's number was told
// apart from the count of copies that give a task up (maxCopies). The run
// field is where it was and a result's copy field is not read, so a result
// of either layout names the same run and task (of an index under 2^32).
const (
	taskIndexBits = 32
	taskCopyBits  = 16
	taskIndexMask = 1<<taskIndexBits - 1
	taskCopyMask  = 1<<taskCopyBits - 1
	maxRuns       = 1<<(64-taskIndexBits-taskCopyBits) - 1
	maxTasks      = taskIndexMask + 1
)

// maxCopies is the number of copies of a task published in a run without
// an accepted result after which the task is given up on: a task that
// every worker fails on. A copy answered by a quarantined worker does not
// count (taskTable.answered).
const maxCopies = 255

// taskID returns the id of copy of task index published by run.
func taskID(run, copy, index int) uint64 {
	return uint64(run)<<(taskIndexBits+taskCopyBits) | uint64(copy)<<taskIndexBits | uint64(index)
}

// splitTaskID returns the run, copy and plan index of a task id.
func splitTaskID(id uint64) (run, copy, index int) {
	return int(id >> (taskIndexBits + taskCopyBits)), int(id >> taskIndexBits & taskCopyMask), int(id & taskIndexMask)
}
