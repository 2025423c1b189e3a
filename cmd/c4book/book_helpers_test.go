package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// The book tests use the 5x4 board: its positions solve in microseconds.
var (
	testBoard      = solver.MustBoard(5, 4)
	testBoardFlags = []string{"--width=5", "--height=4"}
)

// testBookDepth is the depth of the book most tests make.
const testBookDepth = 5

// gamePositions returns a move string for every position of b with at most
// maxDepth stones whose game is not over, one per position (a position and
// its mirror image both appear), shallowest first; "-" is the empty board.
func gamePositions(b *solver.Board, maxDepth int) []string {
	type node struct {
		p     solver.Position
		moves string
	}
	level := []node{{b.NewPosition(), ""}}
	var out []string
	for depth := 0; depth <= maxDepth && len(level) > 0; depth++ {
		seen := map[uint64]bool{}
		var next []node
		for _, n := range level {
			out = append(out, solver.FormatMoves(n.moves))
			if depth == maxDepth || n.p.IsFull() {
				continue
			}
			for col := range b.Width() {
				if !n.p.CanPlay(col) || n.p.IsWinningMove(col) {
					continue
				}
				c := n.p
				c.Play(col)
				if !seen[c.Key()] {
					seen[c.Key()] = true
					next = append(next, node{c, n.moves + string(rune('1'+col))})
				}
			}
		}
		level = next
	}
	return out
}

// positionsAt returns the positions of gamePositions of exactly depth
// stones.
func positionsAt(b *solver.Board, depth int) []string {
	var out []string
	for _, m := range gamePositions(b, depth) {
		if m != solver.EmptyMoves && len(m) == depth || m == solver.EmptyMoves && depth == 0 {
			out = append(out, m)
		}
	}
	return out
}

// solvedCache memoises solvedLines.
var solvedCache sync.Map // depth -> string

// solvedLines returns the output of "c4book solve" on the 5x4 board for
// every position of at most depth stones: "moves score" lines.
func solvedLines(tb testing.TB, depth int) string {
	tb.Helper()
	if v, ok := solvedCache.Load(depth); ok {
		return v.(string)
	}
	in := strings.Join(gamePositions(testBoard, depth), "\n")
	r := run(tb, in, append([]string{"solve", testTTSize}, testBoardFlags...)...)
	wantOK(tb, r)
	solvedCache.Store(depth, r.stdout)
	return r.stdout
}

// makeBook makes a 5x4 book in a temporary directory by importing the
// solve output of every position of at most depth stones, and returns its
// path.
func makeBook(tb testing.TB, depth int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "book")
	r := run(tb, solvedLines(tb, depth), append([]string{"book", "import", "--create", "--book", path}, testBoardFlags...)...)
	wantOK(tb, r)
	return path
}

// withBook opens the book at path for writing, calls fn and closes it:
// Run cannot open a book the test holds open.
func withBook(tb testing.TB, path string, fn func(bk *book.Book)) {
	tb.Helper()
	bk, err := book.Open(path, &book.Options{CacheBytes: 1 << 20, MemTableBytes: 1 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	fn(bk)
	if err := bk.Close(); err != nil {
		tb.Fatal(err)
	}
}

// scoreMap parses "moves score..." lines into a map from the moves to the
// rest of the line.
func scoreMap(tb testing.TB, out string) map[string]string {
	tb.Helper()
	m := map[string]string{}
	for _, line := range outputLines(out) {
		moves, rest, ok := strings.Cut(line, " ")
		if !ok {
			tb.Fatalf("line %q: want \"moves score\"", line)
		}
		m[moves] = rest
	}
	return m
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

// atoi is strconv.Atoi for numbers the test knows are numbers.
func atoi(tb testing.TB, s string) int {
	tb.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
