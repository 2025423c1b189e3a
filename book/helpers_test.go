package book

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/c4book/c4book/solver"
)

// Small boards for tests that need many solves: the CPU is shared.
var (
	board4x4 = solver.MustBoard(4, 4)
	board5x4 = solver.MustBoard(5, 4)
)

// testOptions returns options for a test book: small cache and memtable.
func testOptions(b *solver.Board) *Options {
	return &Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20}
}

// newBook creates an empty book of board b in a temporary directory and
// closes it when the test ends.
func newBook(tb testing.TB, b *solver.Board) *Book {
	tb.Helper()
	return openBook(tb, filepath.Join(tb.TempDir(), "book"), testOptions(b))
}

// openBook opens the book at path and closes it when the test ends.
func openBook(tb testing.TB, path string, o *Options) *Book {
	tb.Helper()
	bk, err := Open(path, o)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := bk.Close(); err != nil && !errors.Is(err, ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return bk
}

// mustParse plays a move string on b.
func mustParse(tb testing.TB, b *solver.Board, moves string) solver.Position {
	tb.Helper()
	p, err := b.Parse(moves)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// walk calls fn once for every position of b up to maxDepth stones whose
// game is not over, one per canonical key, shallowest first.
func walk(b *solver.Board, maxDepth int, fn func(p solver.Position)) {
	level := []solver.Position{b.NewPosition()}
	for depth := 0; depth <= maxDepth && len(level) > 0; depth++ {
		seen := make(map[uint64]bool)
		var next []solver.Position
		for _, p := range level {
			fn(p)
			if depth == maxDepth || p.IsFull() {
				continue
			}
			for col := range b.Width() {
				if !p.CanPlay(col) || p.IsWinningMove(col) {
					continue
				}
				c := p
				c.Play(col)
				if k := c.CanonicalKey(); !seen[k] {
					seen[k] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
}

// solvedCache memoises solvedEntries.
var solvedCache sync.Map // "WxH/depth" -> []Entry

// solvedEntries returns every non-terminal position of b up to maxDepth
// stones with its exact score, shallowest first. The result is shared:
// callers must not modify it.
func solvedEntries(tb testing.TB, b *solver.Board, maxDepth int) []Entry {
	tb.Helper()
	id := b.String() + "/" + string(rune('0'+maxDepth))
	if v, ok := solvedCache.Load(id); ok {
		return v.([]Entry)
	}
	s, err := solver.New(b, 1<<20)
	if err != nil {
		tb.Fatal(err)
	}
	var entries []Entry
	walk(b, maxDepth, func(p solver.Position) {
		entries = append(entries, EntryOf(p, Value{Score: s.Solve(p), Origin: OriginSolved}))
	})
	solvedCache.Store(id, entries)
	return entries
}

// putAll writes entries to bk in one batch.
func putAll(tb testing.TB, bk *Book, entries []Entry) {
	tb.Helper()
	if err := bk.PutBatch(entries); err != nil {
		tb.Fatal(err)
	}
}

// mixedEntries returns the solved entries of b up to maxDepth stones with
// the three origins in turn, so that a test sees origins kept.
func mixedEntries(tb testing.TB, b *solver.Board, maxDepth int) []Entry {
	tb.Helper()
	entries := slices.Clone(solvedEntries(tb, b, maxDepth))
	for i := range entries {
		entries[i].Origin = Origins[i%len(Origins)]
	}
	return entries
}

// bookEntries returns every entry of bk, in key order.
func bookEntries(tb testing.TB, bk *Book) []Entry {
	tb.Helper()
	var all []Entry
	for e, err := range bk.Entries(0, maxDepth) {
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, e)
	}
	return all
}

// firstEntryDiff describes the first index at which got and want differ.
func firstEntryDiff(got, want []Entry) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return "at " + strconv.Itoa(i) + ": " + got[i].String() + ", want " + want[i].String()
		}
	}
	return "one is a prefix of the other"
}
