package coordinator

import (
	"iter"
	"slices"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
)

// leavesOf writes keys as a leaves file, and order (if not nil) as the
// order of the job's leaves, and opens them.
func leavesOf(tb testing.TB, keys, order []uint64) *jobLeaves {
	tb.Helper()
	dir := tb.TempDir()
	write := func(w *keyfile.Writer, err error, values []uint64) {
		if err != nil {
			tb.Fatal(err)
		}
		for _, v := range values {
			if err := w.Add(v); err != nil {
				tb.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	w, err := keyfile.Create(leavesFile(dir))
	write(w, err, keys)
	if order != nil {
		w, err := keyfile.CreateList(orderFile(dir))
		write(w, err, order)
	}
	l, err := openLeaves(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// TestTaskTable_order: with an order, task i is the leaves of places
// [i*size, (i+1)*size) of the order, and a task is held when those are.
func TestTaskTable_order(t *testing.T) {
	t.Parallel()
	keys := []uint64{10, 20, 30, 40, 50, 60, 70}
	tt := newTaskTable(leavesOf(t, keys, []uint64{6, 0, 3, 1, 5, 2, 4}), 3)
	for i, want := range [][]uint64{{70, 10, 40}, {20, 60, 30}, {50}} {
		if got, err := tt.keys(i); err != nil || !slices.Equal(got, want) {
			t.Errorf("task %d: keys %v, %v; want %v", i, got, err, want)
		}
	}
	entries := func(keys ...uint64) iter.Seq2[book.Entry, error] {
		return func(yield func(book.Entry, error) bool) {
			for _, k := range keys {
				if !yield(book.Entry{Depth: 8, Key: k}, nil) {
					return
				}
			}
		}
	}
	if err := tt.markHeld(entries(10, 20, 40, 50, 70)); err != nil {
		t.Fatal(err)
	}
	if !tt.done[0] || tt.done[1] || !tt.done[2] || tt.pending != 1 {
		t.Errorf("done %v, %d pending: want tasks 0 and 2 done", tt.done, tt.pending)
	}
	got, err := tt.tasksWith(entries(10, 30, 60), func(e book.Entry) bool { return e.Key != 10 })
	if err != nil || !slices.Equal(got, []int{1}) {
		t.Errorf("tasksWith(30, 60) = %v, %v; want [1]", got, err)
	}
	for _, bad := range [][]uint64{{0, 9, 1, 2, 3, 4, 5}, {0, 1, 1, 2, 3, 4, 5}, {0, 1, 2}} {
		dir := t.TempDir()
		for path, values := range map[string][]uint64{leavesFile(dir): keys, orderFile(dir): bad} {
			create := keyfile.Create
			if path == orderFile(dir) {
				create = keyfile.CreateList
			}
			w, err := create(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range values {
				w.Add(v)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if l, err := openLeaves(dir); err == nil {
			l.Close()
			t.Errorf("openLeaves with the order %v of 7 leaves: no error", bad)
		}
	}
}

func TestTaskTable(t *testing.T) {
	t.Parallel()
	keys := []uint64{10, 20, 30, 40, 50, 60, 70}
	tt := newTaskTable(leavesOf(t, keys, nil), 3)
	if tt.Len() != 3 || tt.pending != 3 {
		t.Fatalf("%d tasks, %d pending; want 3 of 3, 3, 1 positions", tt.Len(), tt.pending)
	}
	if got, _ := tt.keys(2); !slices.Equal(got, []uint64{70}) || tt.positions(1) != 3 {
		t.Errorf("task 2 keys %v, task 1 of %d positions", got, tt.positions(1))
	}
	if err := tt.checkKeys(1, []uint64{40, 50, 60}); err != nil {
		t.Errorf("checkKeys of task 1's keys: %v", err)
	}
	for _, bad := range [][]uint64{{40, 50}, {40, 50, 61}, {40, 50, 60, 70}} {
		if err := tt.checkKeys(1, bad); err == nil {
			t.Errorf("checkKeys(1, %v) accepted", bad)
		}
	}
	if err := tt.checkKeys(3, []uint64{1}); err == nil {
		t.Error("checkKeys of a task past the plan accepted")
	}

	// Task 0 held whole, task 1 in part: only task 0 is done.
	held := []book.Entry{{Depth: 8, Key: 10}, {Depth: 8, Key: 20}, {Depth: 8, Key: 30}, {Depth: 8, Key: 50}}
	seq := func(yield func(book.Entry, error) bool) {
		for _, e := range held {
			if !yield(e, nil) {
				return
			}
		}
	}
	if err := tt.markHeld(seq); err != nil {
		t.Fatal(err)
	}
	if !tt.done[0] || tt.done[1] || tt.done[2] || tt.pending != 2 {
		t.Errorf("done %v, %d pending: want task 0 alone done", tt.done, tt.pending)
	}
	if left, total := tt.leavesLeft(); left != 4 || total != 7 {
		t.Errorf("leavesLeft = %d, %d; want 4, 7", left, total)
	}

	tt.setFailed(2)
	tt.setFailed(2)
	if tt.needed(2) || tt.pending != 1 {
		t.Errorf("after failing task 2 twice: needed %v, %d pending", tt.needed(2), tt.pending)
	}
	tt.setDone(2) // its late result: welcome, counted already
	tt.setDone(1)
	tt.setDone(1)
	if tt.pending != 0 || !tt.done[2] {
		t.Errorf("%d pending, task 2 done %v", tt.pending, tt.done[2])
	}

	tt.published(1)
	tt.published(1)
	tt.answered(1, true)
	tt.answered(1, true)
	tt.answered(1, true)
	if tt.copies[1] != 2 || tt.out[1] != 0 {
		t.Errorf("task 1: %d copies, %d out; want 2, 0", tt.copies[1], tt.out[1])
	}

	// A copy a quarantined worker answered does not count; its number is
	// used all the same, and the numbers wrap.
	if n := tt.published(1); n != 2 {
		t.Errorf("third copy of task 1 numbered %d, want 2", n)
	}
	tt.answered(1, false)
	if tt.copies[1] != 2 || tt.out[1] != 0 {
		t.Errorf("task 1 after an ignored answer: %d copies, %d out; want 2, 0", tt.copies[1], tt.out[1])
	}
	for range 1<<16 - 3 {
		tt.published(1)
		tt.answered(1, false)
	}
	if n := tt.published(1); n != 0 || tt.copies[1] != 3 {
		t.Errorf("copy 65,536 of task 1 numbered %d, %d counted; want 0, 3", n, tt.copies[1])
	}
}
