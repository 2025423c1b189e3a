package book

import (
	"errors"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/c4book/c4book/solver"
)

func TestBook_tasks(t *testing.T) {
	b := newBook(t, solver.Standard)
	plan := [][]uint64{{1, 2, 3}, {4}, {5, 6}}
	if err := b.PutTasks("job-a", 0, plan[:2]); err != nil {
		t.Fatal(err)
	}
	if err := b.PutTasks("job-a", 2, plan[2:]); err != nil {
		t.Fatal(err)
	}
	// Another job, whose id extends the first: its tasks stay apart.
	if err := b.PutTasks("job-ab", 0, [][]uint64{{9}}); err != nil {
		t.Fatal(err)
	}
	var got [][]uint64
	err := b.Tasks("job-a", func(index uint64, keys []uint64) error {
		if index != uint64(len(got)) {
			t.Errorf("task %d read as index %d", len(got), index)
		}
		got = append(got, slices.Clone(keys))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(plan) {
		t.Fatalf("read %d tasks, want %d", len(got), len(plan))
	}
	for i := range plan {
		if !slices.Equal(got[i], plan[i]) {
			t.Errorf("task %d = %v, want %v", i, got[i], plan[i])
		}
	}
	stop := errors.New("stop")
	if err := b.Tasks("job-a", func(uint64, []uint64) error { return stop }); err != stop {
		t.Errorf("Tasks did not return fn's error: %v", err)
	}
	if err := b.DeleteTasks("job-a"); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = b.Tasks("job-a", func(uint64, []uint64) error { n++; return nil })
	m := 0
	_ = b.Tasks("job-ab", func(uint64, []uint64) error { m++; return nil })
	if n != 0 || m != 1 {
		t.Errorf("after DeleteTasks: %d tasks of job-a, %d of job-ab; want 0 and 1", n, m)
	}
	// A damaged task record is reported with its key.
	if err := b.db.Set(taskKey("job-c", 0), []byte{taskVersion, 1, 2, 3}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if err := b.Tasks("job-c", func(uint64, []uint64) error { return nil }); !errors.As(err, &ce) {
		t.Errorf("Tasks over a truncated record = %v, want a *CorruptError", err)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{0xFF, 'T', 3}, []byte{0xFF, 'T', 4}},
		{[]byte{1, 0xFF}, []byte{2}},
		{[]byte{0xFF, 0xFF}, nil},
	} {
		if got := prefixEnd(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("prefixEnd(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
