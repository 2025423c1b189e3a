package book

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/c4book/c4book/solver"
)

// TestPackValue: every score of every board and every origin packs into a
// byte and back.
func TestPackValue(t *testing.T) {
	t.Parallel()
	seen := map[byte]bool{}
	for score := packedScoreMin; score <= packedScoreMax; score++ {
		for _, o := range Origins {
			v := Value{Score: score, Origin: o}
			b := packValue(v)
			if got := unpackValue(b); got != v || seen[b] {
				t.Fatalf("packValue(%v) = %#x, unpacks to %v (seen before: %v)", v, b, got, seen[b])
			}
			seen[b] = true
		}
	}
	// The widest range of any board: 7x8 has 56 cells, 9x6 54, 8x7 56; a
	// board has at most 63.
	for w := 1; w <= solver.MaxWidth; w++ {
		for h := 1; solver.CheckSize(w, h) == nil; h++ {
			b := solver.MustBoard(w, h)
			if lo, hi := b.ScoreRange(0); lo < packedScoreMin || hi > packedScoreMax {
				t.Errorf("%v: scores [%d, %d] do not pack", b, lo, hi)
			}
		}
	}
}

// loadedEntries returns the entries of l in key order.
func loadedEntries(l *Loaded) []Entry {
	all := slices.Collect(l.Entries())
	slices.SortFunc(all, compareEntries)
	return all
}

// compareEntries orders entries by depth, then key: the book's order.
func compareEntries(a, b Entry) int {
	if a.Depth != b.Depth {
		return a.Depth - b.Depth
	}
	return cmp.Compare(a.Key, b.Key)
}

// TestLoad: a book loaded into memory answers every position as the book
// does, found or not, and so does the load of its binary export, from a
// file or a stream.
func TestLoad(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	entries := mixedEntries(t, board5x4, 6)
	putAll(t, bk, entries)
	l, err := Load(bk)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != len(entries) || l.Depth() != 6 || !l.Board().Equal(board5x4) {
		t.Fatalf("Load: %d entries, depth %d, board %v; want %d, 6, 5x4", l.Len(), l.Depth(), l.Board(), len(entries))
	}
	if per := float64(l.Bytes()) / float64(l.Len()); per < 9 || per > 12 {
		t.Errorf("%.2f bytes an entry, want 9 to 12", per)
	}
	want := bookEntries(t, bk)
	if got := loadedEntries(l); !slices.Equal(got, want) {
		t.Fatalf("Entries differ from the book's: %s", firstEntryDiff(got, want))
	}
	// Every position of up to 8 stones: held up to 6, not beyond.
	asked := 0
	walk(board5x4, 8, func(p solver.Position) {
		asked++
		wv, wok, _ := bk.Get(p)
		gv, gok, err := l.Get(p)
		if err != nil || gv != wv || gok != wok {
			t.Fatalf("%v: Loaded.Get = %v, %v, %v; the book %v, %v", p, gv, gok, err, wv, wok)
		}
	})
	for _, e := range want {
		for _, k := range []uint64{e.Key - 1, e.Key + 1, e.Key ^ 1<<20} {
			wv, wok, _ := bk.GetEntry(e.Depth, k)
			if gv, gok, _ := l.GetEntry(e.Depth, k); gv != wv || gok != wok {
				t.Fatalf("GetEntry(%d, %#x) = %v, %v; the book %v, %v", e.Depth, k, gv, gok, wv, wok)
			}
		}
	}
	for _, depth := range []int{-1, 21, 65, 1000} {
		if _, ok, err := l.GetEntry(depth, 0); ok || err != nil {
			t.Errorf("GetEntry(%d, 0) = %v, %v", depth, ok, err)
		}
	}
	if _, _, err := l.Get(solver.Standard.NewPosition()); !errors.Is(err, ErrBoardMismatch) {
		t.Errorf("Get of a 7x6 position: %v, want ErrBoardMismatch", err)
	}
	t.Logf("%d positions asked, %d entries, %.2f bytes an entry", asked, l.Len(), float64(l.Bytes())/float64(l.Len()))

	t.Run("empty book", func(t *testing.T) {
		l, err := Load(newBook(t, board4x4))
		if err != nil || l.Len() != 0 || l.Depth() != -1 {
			t.Fatalf("Load of an empty book: %d entries, depth %d, %v", l.Len(), l.Depth(), err)
		}
		if _, ok, _ := l.GetEntry(0, 0); ok {
			t.Error("an empty book holds the empty board")
		}
	})
}

// TestLoaded_index: on a 7x6 book of tens of thousands of positions a
// depth, whose index has many buckets, every key is found and keys next
// to them or from deeper positions are not.
func TestLoaded_index(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	var entries []Entry
	var deeper []Entry
	walk(solver.Standard, 8, func(p solver.Position) {
		lo, hi := solver.Standard.ScoreRange(p.Moves())
		e := EntryOf(p, Value{Score: lo + rng.IntN(hi-lo+1), Origin: Origins[rng.IntN(3)]})
		if p.Moves() == 8 {
			deeper = append(deeper, e)
			return
		}
		entries = append(entries, e)
	})
	slices.SortFunc(entries, compareEntries)
	lb := newLoadedBuilder(solver.Standard, 0)
	held := map[[2]uint64]Value{}
	for _, e := range entries {
		if err := lb.add(e); err != nil {
			t.Fatal(err)
		}
		held[[2]uint64{uint64(e.Depth), e.Key}] = e.Value
	}
	l := lb.done()
	r := l.runs[7]
	if r.hi-r.lo < 10000 || len(r.starts) < 1000 {
		t.Fatalf("depth 7: %d entries, %d buckets: want a large index", r.hi-r.lo, len(r.starts))
	}
	// The mixed keys fill the buckets evenly: a few keys each.
	var most uint32
	for b := range len(r.starts) - 1 {
		most = max(most, r.starts[b+1]-r.starts[b])
	}
	if n, buckets := r.hi-r.lo, len(r.starts)-1; n < loadedBucketKeys*buckets || n >= 2*loadedBucketKeys*buckets || most > 32 {
		t.Errorf("depth 7: %d keys in %d buckets, at most %d in one", n, buckets, most)
	}
	if !slices.IsSorted(l.keys[r.lo:r.hi]) {
		t.Error("depth 7: the mixed keys are not sorted")
	}
	check := func(depth int, key uint64) {
		want, wok := held[[2]uint64{uint64(depth), key}]
		if got, ok, _ := l.GetEntry(depth, key); ok != wok || got != want {
			t.Fatalf("GetEntry(%d, %#x) = %v, %v; want %v, %v", depth, key, got, ok, want, wok)
		}
	}
	for _, e := range entries {
		check(e.Depth, e.Key)
		check(e.Depth, e.Key+1)
		check(e.Depth, e.Key-1)
		check(e.Depth+1, e.Key)
	}
	for _, e := range deeper {
		check(7, e.Key)
		check(8, e.Key)
	}
	for range 100000 {
		check(rng.IntN(9), rng.Uint64()>>15)
	}
	if err := lb.add(entries[0]); err == nil {
		t.Error("an entry out of order was added")
	}
}

// TestLoaded_NewOracle: a solver seeded with a loaded book of the
// positions of 4 stones gets the scores of an unseeded one, in fewer
// nodes, and the oracle counts its lookups.
func TestLoaded_NewOracle(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	var four []Entry
	for _, e := range solvedEntries(t, board5x4, 4) {
		if e.Depth == 4 {
			four = append(four, e)
		}
	}
	putAll(t, bk, four)
	l, err := Load(bk)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := solver.New(board5x4, 1<<20)
	seeded, _ := solver.New(board5x4, 1<<20)
	o := l.NewOracle()
	defer o.Close()
	if err := o.Attach(seeded); err != nil {
		t.Fatal(err)
	}
	for _, moves := range []string{"", "3", "32", "1", "515"} {
		p := mustParse(t, board5x4, moves)
		plain.Table().Clear()
		seeded.Table().Clear()
		plain.ResetNodes()
		seeded.ResetNodes()
		want, got := plain.Solve(p), seeded.Solve(p)
		if got != want || seeded.Nodes() >= plain.Nodes() {
			t.Errorf("%q: seeded %d in %d nodes, plain %d in %d", moves, got, seeded.Nodes(), want, plain.Nodes())
		}
	}
	if asked, found := o.Lookups(); asked == 0 || found == 0 || o.Err() != nil {
		t.Errorf("Lookups = %d, %d; Err = %v", asked, found, o.Err())
	}
	other, _ := solver.New(solver.Standard, 1<<20)
	if err := o.Attach(other); !errors.Is(err, ErrBoardMismatch) {
		t.Errorf("Attach to a 7x6 solver: %v, want ErrBoardMismatch", err)
	}
}
