package book

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/c4book/c4book/book/packed"
	"github.com/c4book/c4book/solver"
)

// packTo packs the set of root and depth of bk into a file of a new
// temporary directory, and returns its path and the report.
func packTo(tb testing.TB, bk *Book, root string, depth int) (string, PackReport) {
	tb.Helper()
	var buf bytes.Buffer
	rep, err := bk.Pack(context.Background(), &buf, root, depth, &DigestOptions{TempDir: tb.TempDir(), MemKeys: 1 << 10})
	if err != nil {
		tb.Fatal(err)
	}
	if rep.Bytes != int64(buf.Len()) {
		tb.Fatalf("Pack reports %d bytes, wrote %d", rep.Bytes, buf.Len())
	}
	path := filepath.Join(tb.TempDir(), "book.c4pack")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, rep
}

// solvedBook returns a Pebble book holding every position of b up to
// depth stones with its exact score, and the entries.
func solvedBook(tb testing.TB, b *solver.Board, depth int) (*Book, []Entry) {
	tb.Helper()
	entries := solvedEntries(tb, b, depth)
	bk := newBook(tb, b)
	putAll(tb, bk, entries)
	return bk, entries
}

// TestBook_Pack: a packed book opened with Open reads as the book it was
// made from, through every reading method: Get, Reader, Entries, View,
// Stats, DepthRange, Jobs, Digest, Verify, Load and the oracle; and its
// digest is the book's.
func TestBook_Pack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, entries := solvedBook(t, board5x4, 8)
	for _, root := range []string{"", "3", "21"} {
		depth := 8
		path, rep := packTo(t, src, root, depth)
		want, err := src.Digest(ctx, root, depth, &DigestOptions{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Digest != want {
			t.Fatalf("root %q: Pack's digest %v, the book's %v", root, rep.Digest, want)
		}
		pk := openBook(t, path, &Options{ReadOnly: true})
		if pk.Packed() == nil || !pk.ReadOnly() || pk.Path() != path {
			t.Fatalf("root %q: Open of a packed file: packed %v, read-only %v, path %s", root, pk.Packed() != nil, pk.ReadOnly(), pk.Path())
		}
		got, err := pk.Digest(ctx, root, depth, &DigestOptions{TempDir: t.TempDir()})
		if err != nil || got != want {
			t.Fatalf("root %q: digest of the packed book %v, %v; want %v", root, got, err, want)
		}
		// The set's entries, in order, with the scores of the book.
		set := underRoot(t, board5x4, root, depth)
		slices.SortFunc(set, func(a, b Entry) int {
			return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Key, b.Key))
		})
		score := map[[2]uint64]int{}
		for _, e := range entries {
			score[[2]uint64{uint64(e.Depth), e.Key}] = e.Score
		}
		all := bookEntries(t, pk)
		if len(all) != len(set) {
			t.Fatalf("root %q: %d entries, the set has %d", root, len(all), len(set))
		}
		rd, err := pk.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range all {
			if e.Depth != set[i].Depth || e.Key != set[i].Key || e.Score != score[[2]uint64{uint64(e.Depth), e.Key}] {
				t.Fatalf("root %q: entry %d is %v, want depth %d key %#x score %d", root, i, e, set[i].Depth, set[i].Key, score[[2]uint64{uint64(set[i].Depth), set[i].Key}])
			}
			p, _ := board5x4.PositionFromKey(e.Key)
			wantOrigin := OriginDerived
			if e.Depth == depth && !p.CanWinNext() {
				wantOrigin = OriginSolved
			}
			if e.Origin != wantOrigin {
				t.Fatalf("root %q: %v: origin %v, want %v", root, e, e.Origin, wantOrigin)
			}
			v, ok, err := pk.Get(p)
			v2, ok2, err2 := rd.GetEntry(e.Depth, e.Key)
			if err != nil || err2 != nil || !ok || !ok2 || v != e.Value || v2 != e.Value {
				t.Fatalf("root %q: %v: Get %v %v %v, Reader %v %v %v", root, e, v, ok, err, v2, ok2, err2)
			}
		}
		rd.Close()
		// Not in the set: deeper, or off the root.
		outside := []string{"112211223"}
		if root != "" {
			outside = append(outside, "1111", "5")
		}
		for _, moves := range outside {
			if v, ok, err := pk.Get(mustParse(t, board5x4, moves)); ok || err != nil {
				t.Errorf("root %q: Get(%s) = %v, %v, %v: not in the set", root, moves, v, ok, err)
			}
		}
		// In it as the mirror image of a position reached from the root.
		if root == "21" {
			a, _, _ := pk.Get(mustParse(t, board5x4, "2133"))
			b, ok, err := pk.Get(mustParse(t, board5x4, "4533"))
			if !ok || err != nil || a != b {
				t.Errorf("root 21: the mirror image 4533 of 2133: %v, %v, %v; want %v", b, ok, err, a)
			}
		}
		lo, hi, ok, err := pk.DepthRange()
		if err != nil || !ok || lo != len(root) || hi != depth {
			t.Errorf("root %q: DepthRange = %d, %d, %v, %v", root, lo, hi, ok, err)
		}
		st, err := pk.Stats()
		if err != nil || st.Entries != int64(len(set)) || st.Jobs != 1 || st.DiskBytes != uint64(rep.Bytes) {
			t.Errorf("root %q: Stats = %+v, %v", root, st, err)
		}
		jobs, err := pk.Jobs()
		if err != nil || len(jobs) != 1 || jobs[0].State != JobDone || jobs[0].Root != root || jobs[0].Depth != depth {
			t.Errorf("root %q: Jobs = %+v, %v", root, jobs, err)
		}
		v, err := pk.View()
		if err != nil {
			t.Fatal(err)
		}
		if n, deepest, err := v.Count(0, maxDepth); err != nil || n != int64(len(set)) || deepest != depth {
			t.Errorf("root %q: View.Count = %d, %d, %v", root, n, deepest, err)
		}
		v.Close()
		rep2, err := pk.Verify(ctx, &VerifyOptions{Solver: mustSolver(t, board5x4), Sample: 20})
		if err != nil || !rep2.OK() || rep2.Entries != int64(len(set)) || rep2.Resolved != 20 {
			t.Errorf("root %q: Verify = %+v, %v", root, rep2, err)
		}
		l, err := Load(pk)
		if err != nil || l.Len() != len(set) {
			t.Errorf("root %q: Load: %d entries, %v", root, l.Len(), err)
		}
	}
}

// mustSolver returns a solver of b with a small table.
func mustSolver(tb testing.TB, b *solver.Board) *solver.Solver {
	tb.Helper()
	s, err := solver.New(b, 1<<20)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestBook_Pack_missing: a book lacking a position of the set packs
// nothing, and names the position.
func TestBook_Pack_missing(t *testing.T) {
	t.Parallel()
	entries := solvedEntries(t, board5x4, 6)
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.Depth == 5 })
	bk := newBook(t, board5x4)
	putAll(t, bk, slices.Delete(slices.Clone(entries), i, i+1))
	var buf bytes.Buffer
	_, err := bk.Pack(context.Background(), &buf, "", 6, &DigestOptions{TempDir: t.TempDir()})
	missing, ok := errors.AsType[*MissingError](err)
	if !ok || missing.Key != entries[i].Key || buf.Len() != 0 {
		t.Fatalf("Pack of a book lacking a position: %v, %d bytes written", err, buf.Len())
	}
}

// TestBook_Pack_wrongScore: a book whose score the rules contradict is
// not packed.
func TestBook_Pack_wrongScore(t *testing.T) {
	t.Parallel()
	entries := slices.Clone(solvedEntries(t, board5x4, 6))
	i := slices.IndexFunc(entries, func(e Entry) bool {
		p, _ := board5x4.PositionFromKey(e.Key)
		return p.CanWinNext()
	})
	entries[i].Score--
	bk := newBook(t, board5x4)
	putAll(t, bk, entries)
	_, err := bk.Pack(context.Background(), &bytes.Buffer{}, "", 6, &DigestOptions{TempDir: t.TempDir()})
	if err == nil {
		t.Fatal("Pack of a book with a wrong score the rules give succeeded")
	}
}

// TestOpen_packedWrite: a packed book is never opened for writing; the
// error says why. A damaged one fails Verify, naming the block.
func TestOpen_packedWrite(t *testing.T) {
	t.Parallel()
	src, _ := solvedBook(t, board5x4, 6)
	path, _ := packTo(t, src, "", 6)
	for _, o := range []*Options{nil, {Create: true, Board: board5x4}} {
		if bk, err := Open(path, o); !errors.Is(err, ErrReadOnly) {
			if err == nil {
				bk.Close()
			}
			t.Errorf("Open(%+v) of a packed book: %v, want ErrReadOnly", o, err)
		}
	}
	if _, err := Open(path, &Options{ReadOnly: true, Board: board4x4}); !errors.Is(err, ErrBoardMismatch) {
		t.Errorf("Open for 4x4 of a 5x4 packed book: %v, want ErrBoardMismatch", err)
	}
	pk := openBook(t, path, &Options{ReadOnly: true})
	if err := pk.Put(mustParse(t, board5x4, "1"), Value{Score: 1, Origin: OriginSolved}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put in a packed book: %v", err)
	}
	// One byte of the data changed.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0x10
	bad := filepath.Join(t.TempDir(), "bad.c4pack")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	bk := openBook(t, bad, &Options{ReadOnly: true})
	rep, err := bk.Verify(context.Background(), nil)
	if err != nil || rep.OK() || rep.Corrupt == 0 {
		t.Fatalf("Verify of a damaged packed book: %+v, %v", rep, err)
	}
	t.Log(rep.Problems[0])
	// Cut short: not opened.
	if err := os.WriteFile(bad, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad, &Options{ReadOnly: true}); !errors.Is(err, ErrCorrupt) || !errors.Is(err, packed.ErrDamaged) {
		t.Errorf("Open of a packed book cut short: %v", err)
	}
}
