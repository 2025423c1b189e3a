package bookfile

import (
	"cmp"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// The helpers of package book's tests that the tests of the file formats
// use, copied.

// maxDepth is above the depth of any board: every depth.
const maxDepth = 64

// Small boards for tests that need many solves: the CPU is shared.
var (
	board4x4 = solver.MustBoard(4, 4)
	board5x4 = solver.MustBoard(5, 4)
)

// testOptions returns options for a test book: small cache and memtable.
func testOptions(b *solver.Board) *book.Options {
	return &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20}
}

// newBook creates an empty book of board b in a temporary directory and
// closes it when the test ends.
func newBook(tb testing.TB, b *solver.Board) *book.Book {
	tb.Helper()
	return openBook(tb, filepath.Join(tb.TempDir(), "book"), testOptions(b))
}

// openBook opens the book at path and closes it when the test ends.
func openBook(tb testing.TB, path string, o *book.Options) *book.Book {
	tb.Helper()
	bk, err := book.Open(path, o)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := bk.Close(); err != nil && !errors.Is(err, book.ErrClosed) {
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
var solvedCache sync.Map // "WxH/depth" -> []book.Entry

// solvedEntries returns every non-terminal position of b up to maxDepth
// stones with its exact score, shallowest first. The result is shared:
// callers must not modify it.
func solvedEntries(tb testing.TB, b *solver.Board, maxDepth int) []book.Entry {
	tb.Helper()
	id := b.String() + "/" + string(rune('0'+maxDepth))
	if v, ok := solvedCache.Load(id); ok {
		return v.([]book.Entry)
	}
	s, err := solver.New(b, 1<<20)
	if err != nil {
		tb.Fatal(err)
	}
	var entries []book.Entry
	walk(b, maxDepth, func(p solver.Position) {
		entries = append(entries, book.EntryOf(p, book.Value{Score: s.Solve(p), Origin: book.OriginSolved}))
	})
	solvedCache.Store(id, entries)
	return entries
}

// putAll writes entries to bk in one batch.
func putAll(tb testing.TB, bk *book.Book, entries []book.Entry) {
	tb.Helper()
	if err := bk.PutBatch(entries); err != nil {
		tb.Fatal(err)
	}
}

// loadedEntries returns the entries of l in key order.
func loadedEntries(l *book.Loaded) []book.Entry {
	all := slices.Collect(l.Entries())
	slices.SortFunc(all, compareEntries)
	return all
}

// compareEntries orders entries by depth, then key: the book's order.
func compareEntries(a, b book.Entry) int {
	if a.Depth != b.Depth {
		return a.Depth - b.Depth
	}
	return cmp.Compare(a.Key, b.Key)
}
