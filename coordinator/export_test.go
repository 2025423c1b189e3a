package coordinator

import (
	"context"
	"testing"
)

// PlanTasks plans spec on bk, in a directory of the test's, and returns
// its leaves in the job's order and its tasks as a run cuts them: for the tests of
// coordinator_test that need to know them.
func PlanTasks(tb testing.TB, spec Spec, bk PlanBook) (leaves []uint64, tasks [][]uint64) {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := MakePlan(context.Background(), spec, bk, dir, nil); err != nil {
		tb.Fatal(err)
	}
	l, err := openLeaves(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	if leaves, err = l.Keys(nil, 0, l.Len()); err != nil {
		tb.Fatal(err)
	}
	tt := newTaskTable(l, spec.TaskSize)
	for i := range tt.Len() {
		from, to := tt.bounds(i)
		tasks = append(tasks, leaves[from:to])
	}
	return leaves, tasks
}
