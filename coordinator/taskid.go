package coordinator

// Task ids. A task's id is the run of the coordinator that published it,
// the copy of the task within the run, and its index in the job's plan:
//
//	 63        48 47     40 39                       0
//	+------------+---------+--------------------------+
//	|    run     |  copy   |   index in the plan      |
//	+------------+---------+--------------------------+
//
// The plan's leaves file is the same in every run, so with the same task
// size the index names the same positions in every run. Run and copy make
// the message id of every publication of a task new: the stream drops a
// message whose id it saw within its duplicate window. A task is published
// again (a new copy) when its result was rejected, when its first answer
// comes if it is cross-checked, and when it is overdue (overdue.go).
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
