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
	for rest := leaves; len(rest) > 0; {
		n := min(len(rest), spec.TaskSize)
		tasks = append(tasks, rest[:n])
		rest = rest[n:]
	}
	return leaves, tasks
}

// DisableTailCopies turns cfg's tail copies off: tasks held to the job's
// end are published again only when overdue.
func DisableTailCopies(cfg *Config) { cfg.noTailCopies = true }

// SetRefereeGate makes cfg's referee call gate before each of its solves,
// with the task's keys; gate's error is the solve's.
func SetRefereeGate(cfg *Config, gate func(ctx context.Context, keys []uint64) error) {
	cfg.refereeGate = gate
}
