package book

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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
	t.Parallel()
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

// TestBook_Verify_solved: with Solved, every entry a worker solved is
// solved again, by several solvers at once: a wrong score anywhere among
// them is found, which a sample would find only by chance.
func TestBook_Verify_solved(t *testing.T) {
	t.Parallel()
	s, err := solver.New(board5x4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	bk, entries := derivedBook(t, filepath.Join(t.TempDir(), "book"))
	var leaves []Entry
	for _, e := range entries {
		p, _ := board5x4.PositionFromKey(e.Key)
		if e.Origin == OriginSolved && !ruled(&p) {
			leaves = append(leaves, e)
		}
	}
	// Three wrong leaves, spread over the key order.
	wrong := map[uint64]bool{}
	for _, i := range []int{0, len(leaves) / 2, len(leaves) - 1} {
		e := leaves[i]
		lo, hi := board5x4.ScoreRange(e.Depth)
		e.Score++
		if e.Score > hi {
			e.Score = lo
		}
		putAll(t, bk, []Entry{e})
		wrong[e.Key] = true
	}
	var calls, last, starts atomic.Int64
	r, err := bk.Verify(context.Background(), &VerifyOptions{Solver: s, Solved: true, Threads: 3,
		Progress: func(resolved, total int64) {
			if resolved == 0 {
				starts.Add(1) // the re-solving begins
				return
			}
			calls.Add(1)
			last.Store(total)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Resolved != int64(len(leaves)) || r.SolvedEntries != int64(len(leaves)) || r.Disagreements != 3 {
		t.Errorf("report %+v: want %d re-solved, 3 disagreements", r, len(leaves))
	}
	for _, p := range r.Problems {
		_, k, _ := DecodeKey(p.Key)
		if p.Check != "solver" || !wrong[k] {
			t.Errorf("problem %v: not one of the planted scores", p)
		}
	}
	if starts.Load() != 1 || calls.Load() != int64(len(leaves)) || last.Load() != int64(len(leaves)) {
		t.Errorf("Progress called once with 0 %d times, then %d times, total %d; want 1, %d, %d", starts.Load(), calls.Load(), last.Load(), len(leaves), len(leaves))
	}
}

// TestStratifiedSample: each who gets an equal share of the sample, every
// depth of each at least one entry, and no entry twice.
func TestStratifiedSample(t *testing.T) {
	t.Parallel()
	s := newStratifiedSample(30, rand.New(rand.NewPCG(1, 2)))
	key := uint64(0)
	add := func(n, depth int, origin Origin, worker uint32) {
		for range n {
			key++
			s.offer(Entry{Depth: depth, Key: key, Value: Value{Origin: origin, Worker: worker}})
		}
	}
	add(1000, 6, OriginSolved, 1) // a busy worker
	add(10, 6, OriginSolved, 2)   // one that solved little
	add(3, 5, OriginSolved, 3)    // one at two depths
	add(100, 6, OriginSolved, 3)
	add(50, 4, OriginDerived, 0)
	got := s.choose()
	count := map[string]int{}
	seen := map[uint64]bool{}
	for _, e := range got {
		if seen[e.Key] {
			t.Errorf("key %d chosen twice", e.Key)
		}
		seen[e.Key] = true
		count[fmt.Sprintf("%v/%d/%d", e.Origin, e.Worker, e.Depth)]++
	}
	// 30 among 4 whos: 8, 8, 7, 7 (the first in order of worker number).
	want := map[string]int{"solved/1/6": 8, "solved/2/6": 8, "solved/3/5": 1, "solved/3/6": 6, "derived/0/4": 7}
	if len(got) != 30 || !maps.Equal(count, want) {
		t.Errorf("chose %d: %v, want 30: %v", len(got), count, want)
	}
	if !slices.IsSortedFunc(got, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Key, b.Key)) }) {
		t.Error("sample not in key order")
	}
}

func TestApportion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n     int
		sizes []int64
		want  []int
	}{
		{10, []int64{100, 100}, []int{5, 5}},
		{10, []int64{1, 1000}, []int{1, 9}},
		{10, []int64{2, 3}, []int{2, 3}},      // no more than there is
		{1, []int64{5, 5, 5}, []int{1, 0, 0}}, // fewer than the strata
		{7, []int64{10, 30, 0}, []int{2, 5, 0}},
		{0, []int64{10}, []int{0}},
	} {
		if got := apportion(c.n, c.sizes); !slices.Equal(got, c.want) {
			t.Errorf("apportion(%d, %v) = %v, want %v", c.n, c.sizes, got, c.want)
		}
	}
}
