package book

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// derivedBook returns a 5x4 book of every position up to depth 6: the
// deepest solved, the others derived.
func derivedBook(tb testing.TB, dir string) (*Book, []Entry) {
	tb.Helper()
	var entries []Entry
	for _, e := range solvedEntries(tb, board5x4, 6) {
		if e.Depth < 6 {
			e.Origin = OriginDerived
		}
		entries = append(entries, e)
	}
	bk := openBook(tb, dir, testOptions(board5x4))
	putAll(tb, bk, entries)
	return bk, entries
}

func TestBook_Verify(t *testing.T) {
	s, err := solver.New(board5x4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("consistent book", func(t *testing.T) {
		bk, entries := derivedBook(t, filepath.Join(t.TempDir(), "book"))
		r, err := bk.Verify(context.Background(), &VerifyOptions{Solver: s, Sample: 100, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", r)
		if !r.OK() || r.Entries != int64(len(entries)) || r.Resolved != 100 ||
			r.ChildChecked+r.ChildSkipped != r.Entries || r.ChildChecked < int64(len(entries)/4) {
			t.Errorf("report %+v", r)
		}
	})
	t.Run("planted wrong scores", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		bk, _ := derivedBook(t, dir)
		// A derived entry at depth 3 and a leaf at depth 6 whose children
		// are not in the book: the first is caught by its children, the
		// second by the solver (all leaves are sampled).
		derived := mustParse(t, board5x4, "123")
		leaf := mustParse(t, board5x4, "123451")
		for _, p := range []solver.Position{derived, leaf} {
			v, _, _ := bk.Get(p)
			lo, hi := board5x4.ScoreRange(p.Moves())
			wrong := v.Score + 1
			if wrong > hi {
				wrong = lo
			}
			if err := bk.Put(p, Value{Score: wrong, Origin: v.Origin}); err != nil {
				t.Fatal(err)
			}
		}
		var log bytes.Buffer
		r, err := bk.Verify(context.Background(), &VerifyOptions{Solver: s, Sample: 1 << 20, SampleMinDepth: 6, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v\n%s", r, log.String())
		if r.OK() || r.Disagreements < 2 {
			t.Fatalf("report %+v: want at least 2 disagreements", r)
		}
		found := map[string]bool{}
		for _, p := range r.Problems {
			found[p.Check+" "+FormatKey(p.Key)] = true
		}
		for check, p := range map[string]solver.Position{"children": derived, "solver": leaf} {
			k := check + " " + FormatKey(AppendKey(nil, p.Moves(), p.CanonicalKey()))
			if !found[k] {
				t.Errorf("no %q problem for %v", check, p)
			}
		}
		if !strings.Contains(log.String(), "children: ") || !strings.Contains(log.String(), "solver: ") {
			t.Errorf("log does not name the checks:\n%s", log.String())
		}
	})
	t.Run("corrupt entry", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		bk, entries := derivedBook(t, dir)
		bk.Close()
		p := mustParse(t, board5x4, "1234")
		writeRaw(t, dir, AppendKey(nil, 4, p.CanonicalKey()), []byte{0x11})
		bk = openBook(t, dir, nil)
		r, err := bk.Verify(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Corrupt != 1 || r.Entries != int64(len(entries)) || len(r.Problems) != 1 || r.Problems[0].Check != "corrupt" {
			t.Errorf("report %+v", r)
		}
		t.Logf("%v", r.Problems)
	})
	t.Run("cancelled", func(t *testing.T) {
		bk, _ := derivedBook(t, filepath.Join(t.TempDir(), "book"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := bk.Verify(ctx, &VerifyOptions{Solver: s, Sample: 10}); err == nil {
			t.Error("Verify with a cancelled context succeeded")
		}
	})
}
