package book

import (
	"bytes"
	"errors"
	"testing"
)

// TestScanKeys: the one iteration loop gives every key of its range, in
// order, from the database or a snapshot (which does not see later
// writes), and stops at the first error of fn, returned as is.
func TestScanKeys(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board4x4)
	entries := solvedEntries(t, board4x4, 5)
	putAll(t, bk, entries[:len(entries)/2])
	snap := bk.db.NewSnapshot()
	defer snap.Close()
	putAll(t, bk, entries[len(entries)/2:])

	lower, upper := []byte{2}, []byte{5} // depths 2..4
	inRange := func(es []Entry) (n int) {
		for _, e := range es {
			if e.Depth >= 2 && e.Depth <= 4 {
				n++
			}
		}
		return n
	}
	scan := func(name string, want int, do func(fn func(k, v []byte) error) error) {
		t.Helper()
		var last []byte
		n := 0
		err := do(func(k, v []byte) error {
			if bytes.Compare(k, lower) < 0 || bytes.Compare(k, upper) >= 0 {
				t.Errorf("%s: key %x outside [%x, %x)", name, k, lower, upper)
			}
			if last != nil && bytes.Compare(k, last) <= 0 {
				t.Errorf("%s: key %x after %x", name, k, last)
			}
			last = append(last[:0], k...)
			n++
			return nil
		})
		if err != nil || n != want {
			t.Errorf("%s: %d keys, %v; want %d, nil", name, n, err, want)
		}
	}
	scan("database", inRange(entries), func(fn func(k, v []byte) error) error { return scanKeys(bk.db, lower, upper, fn) })
	scan("snapshot", inRange(entries[:len(entries)/2]), func(fn func(k, v []byte) error) error { return scanKeys(snap, lower, upper, fn) })

	stop := errors.New("stop here")
	calls := 0
	err := scanKeys(bk.db, lower, upper, func(k, v []byte) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("fn failing: %d calls, %v; want 1 call and its error as is", calls, err)
	}
}
