package book

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// revokeBook returns a book of every 5x4 position up to 6 stones with its
// exact score: those of 6 stones solved, by worker 1 ("honest") or, one
// in three, worker 2 ("liar"), and one in five by no known worker; the
// shallower derived. It has two jobs: "a" from the empty board to depth
// 6, "b" from a root of 7 stones (it holds no entry: it is there to be
// left alone).
func revokeBook(t *testing.T) (*Book, []Entry) {
	t.Helper()
	bk := newBook(t, board5x4)
	if _, err := bk.AddWorker("honest", testKey('A')); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.AddWorker("liar", testKey('B')); err != nil {
		t.Fatal(err)
	}
	entries := slices.Clone(solvedEntries(t, board5x4, 6))
	for i := range entries {
		e := &entries[i]
		switch {
		case e.Depth < 6:
			e.Origin = OriginDerived
		case i%5 == 0:
			e.Worker = 0
		case i%3 == 0:
			e.Worker = 2
		default:
			e.Worker = 1
		}
	}
	putAll(t, bk, entries)
	for _, j := range []Job{{ID: "a", Depth: 6, State: JobDone}, {ID: "b", Root: "3333444", Depth: 9, State: JobDone}} {
		if _, err := bk.PutJob(j); err != nil {
			t.Fatal(err)
		}
	}
	return bk, entries
}

func TestBook_RevokeWorker(t *testing.T) {
	t.Parallel()
	bk, entries := revokeBook(t)
	r, err := bk.RevokeWorker("liar")
	if err != nil {
		t.Fatal(err)
	}
	var wantSolved, wantDerived int64
	for _, e := range entries {
		p, _ := bk.entryPosition(e.Depth, e.Key)
		gone := e.Worker == 2 || e.Origin == OriginDerived && !p.CanWinNext() && !p.IsFull()
		if gone && e.Worker == 2 {
			wantSolved++
		} else if gone {
			wantDerived++
		}
		v, ok, err := bk.GetEntry(e.Depth, e.Key)
		switch {
		case err != nil:
			t.Fatal(err)
		case ok == gone:
			t.Fatalf("%v: in the book %v after the revocation", e, ok)
		case ok && v != e.Value:
			t.Fatalf("%v: now %+v", e, v)
		}
	}
	solved, derived := r.Total()
	if r.Deepest != 6 || r.Worker.Number != 2 || solved != wantSolved || derived != wantDerived || solved == 0 || derived == 0 {
		t.Errorf("report %+v (solved %d, derived %d), want deepest 6, worker 2, %d and %d", r, solved, derived, wantSolved, wantDerived)
	}
	if !slices.Equal(r.Jobs, []string{"a"}) {
		t.Errorf("jobs marked %v, want [a]", r.Jobs)
	}
	a, _, _ := bk.Job("a")
	b, _, _ := bk.Job("b")
	if !a.Replan || a.State != JobPlanning || b.Replan || b.State != JobDone {
		t.Errorf("job a %+v, b %+v: want a to plan again, b left done", a, b)
	}
	for _, j := range []Job{a, b} {
		if !slices.Equal(j.Quarantined, []string{"liar"}) {
			t.Errorf("job %s quarantines %v, want [liar]", j.ID, j.Quarantined)
		}
	}

	// Again: nothing of the worker's is left, nothing changes.
	r, err = bk.RevokeWorker("liar")
	if solved, derived := r.Total(); err != nil || solved != 0 || derived != 0 || r.Deepest != -1 || r.Jobs != nil {
		t.Errorf("second revocation: %+v, %v; want nothing done", r, err)
	}
	if a, _, _ := bk.Job("a"); len(a.Quarantined) != 1 {
		t.Errorf("job a quarantines %v after a second revocation", a.Quarantined)
	}
}

func TestBook_RevokeWorker_errors(t *testing.T) {
	t.Parallel()
	bk, _ := revokeBook(t)
	if _, err := bk.RevokeWorker("nobody"); !errors.Is(err, ErrNoWorker) {
		t.Errorf("RevokeWorker(nobody) = %v, want ErrNoWorker", err)
	} else {
		t.Log(err)
	}
	ro := filepath.Join(t.TempDir(), "ro")
	w := openBook(t, ro, testOptions(board5x4))
	if _, err := w.AddWorker("liar", testKey('B')); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := openBook(t, ro, &Options{ReadOnly: true})
	if _, err := r.RevokeWorker("liar"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("RevokeWorker on a read-only book = %v, want ErrReadOnly", err)
	}
}

// TestOpen_version1Book opens a book that c4book wrote before values
// recorded their worker (testdata/book-v1-5x4-d6: "c4book generate
// --width 5 --height 4 --depth 6 --workers 1", then "book compact", at
// commit 05fa0c8): every entry reads, its solved entries with worker 0,
// and every score is right.
func TestOpen_version1Book(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "book")
	if err := os.CopyFS(dir, os.DirFS("testdata/book-v1-5x4-d6")); err != nil {
		t.Fatal(err)
	}
	bk := openBook(t, dir, &Options{})
	want := solvedEntries(t, board5x4, 6)
	var n int
	byOrigin := map[Origin]int{}
	for e, err := range bk.Entries(0, 20) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Worker != 0 {
			t.Fatalf("%v: a worker in a version 1 book", e)
		}
		byOrigin[e.Origin]++
		n++
	}
	if n != len(want) || byOrigin[OriginSolved] != 1500 || byOrigin[OriginDerived] != len(want)-1500 {
		t.Fatalf("%d entries by origin %v, want %d, 1500 solved and the rest derived", n, byOrigin, len(want))
	}
	for _, e := range want {
		v, ok, err := bk.GetEntry(e.Depth, e.Key)
		if err != nil || !ok || v.Score != e.Score {
			t.Fatalf("%v: book has %+v, %v, %v", e, v, ok, err)
		}
	}
	// A version 2 value beside them, and both read.
	p := want[len(want)-1]
	p.Worker = 7
	putAll(t, bk, []Entry{p})
	if v, _, err := bk.GetEntry(p.Depth, p.Key); err != nil || v != p.Value {
		t.Fatalf("written %+v, read %+v, %v", p.Value, v, err)
	}
}

// TestBook_RevokeUnkeyed: the entries solved by no registered worker go,
// with the derived ones that may depend on them; the registered workers'
// stay, and nobody is quarantined.
func TestBook_RevokeUnkeyed(t *testing.T) {
	t.Parallel()
	bk, entries := revokeBook(t)
	r, err := bk.RevokeUnkeyed()
	if err != nil {
		t.Fatal(err)
	}
	var unkeyed int64
	for _, e := range entries {
		v, ok, err := bk.GetEntry(e.Depth, e.Key)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Origin == OriginSolved && e.Worker == 0:
			unkeyed++
			if ok {
				t.Errorf("%v: an unkeyed entry left", e)
			}
		case e.Origin == OriginSolved && (!ok || v.Worker != e.Worker):
			t.Errorf("%v: a registered worker's entry removed or changed (%v, %v)", e, v, ok)
		}
	}
	if solved, _ := r.Total(); !r.Unkeyed || solved != unkeyed || unkeyed == 0 || !slices.Equal(r.Jobs, []string{"a"}) {
		t.Errorf("report %+v: want the %d unkeyed entries removed, job a marked", r, unkeyed)
	}
	j, _, _ := bk.Job("a")
	if !j.Replan || len(j.Quarantined) != 0 {
		t.Errorf("job a: replan %v, quarantined %q; want replanned, nobody quarantined", j.Replan, j.Quarantined)
	}
}
