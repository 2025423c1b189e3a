package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// solveNodes runs "c4book solve --nodes" on the 5x4 board with extra args
// and returns the output and the nodes searched for each position.
func solveNodes(tb testing.TB, stdin string, args ...string) (string, map[string]int) {
	tb.Helper()
	r := run(tb, stdin, append(append([]string{"solve", "--nodes", testTTSize}, testBoardFlags...), args...)...)
	wantOK(tb, r)
	nodes := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^(\S+): (\d+) nodes$`).FindAllStringSubmatch(r.stderr, -1) {
		nodes[m[1]] = atoi(tb, m[2])
	}
	return r.stdout, nodes
}

func TestSolve_book(t *testing.T) {
	t.Parallel()
	// A book of depths 3 and 4 only: positions of up to 2 stones are not
	// in it, and their searches meet its positions.
	var lines []string
	for _, l := range outputLines(solvedLines(t, 4)) {
		if moves, _, _ := strings.Cut(l, " "); moves != "-" && len(moves) >= 3 {
			lines = append(lines, l)
		}
	}
	path := filepath.Join(t.TempDir(), "book")
	wantOK(t, run(t, strings.Join(lines, "\n"), append([]string{"book", "import", "--create", "--book", path}, testBoardFlags...)...))
	positions := append(gamePositions(testBoard, 2), positionsAt(testBoard, 4)[:10]...)
	positions = append(positions, positionsAt(testBoard, 7)[:10]...)

	for _, mode := range []string{"exact", "-w", "-a"} {
		t.Run(mode+": same answers", func(t *testing.T) {
			var flags []string
			if mode != "exact" {
				flags = []string{mode}
			}
			in := strings.Join(positions, "\n")
			without, _ := solveNodes(t, in, append(flags, "--no-book")...)
			with, _ := solveNodes(t, in, append(flags, "--book", path)...)
			if with != without {
				t.Errorf("solve %s --book differs from solve %s:\n%s", mode, mode, firstDiff(with, without))
			}
		})
	}
	t.Run("fewer nodes", func(t *testing.T) {
		// One run per position, so that every search starts with an
		// empty table, with and without the book.
		for _, moves := range positions {
			_, without := solveNodes(t, "", moves, "--no-book")
			_, with := solveNodes(t, "", moves, "--book", path)
			n, m := without[moves], with[moves]
			depth := len(moves)
			if moves == "-" {
				depth = 0
			}
			switch {
			case depth == 3 || depth == 4:
				if m != 0 {
					t.Errorf("%s is in the book: %d nodes, want 0", moves, m)
				}
			case depth < 3:
				// The search reaches the book's positions: it stops there.
				if m >= n {
					t.Errorf("%s: %d nodes with the book, %d without; want fewer", moves, m, n)
				}
			default:
				// Deeper than the book: nothing to ask it.
				if m != n {
					t.Errorf("%s: %d nodes with the book, %d without; want the same", moves, m, n)
				}
			}
		}
	})
	t.Run("the shipped book", func(t *testing.T) {
		// Without --book, the book shipped for 5x4 (every position):
		// no position is searched, and the answers are the solver's.
		in := strings.Join(positions, "\n")
		shipped, nodes := solveNodes(t, in)
		alone, _ := solveNodes(t, in, "--no-book")
		if shipped != alone {
			t.Errorf("solve with the shipped book differs from solve --no-book:\n%s", firstDiff(shipped, alone))
		}
		for moves, n := range nodes {
			if n != 0 {
				t.Errorf("%s: %d nodes with the shipped book of every position, want 0", moves, n)
			}
		}
		wantErr(t, run(t, "", "solve", "--book", path, "--no-book", "4"), "--book and --no-book cannot be used together")
	})
	t.Run("book of another board", func(t *testing.T) {
		r := run(t, "", "solve", "--book", path, "4")
		wantErr(t, r, "book "+path+" holds 5x4 positions, not 7x6", "--width 5 --height 4")
	})
	t.Run("missing book", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nothing")
		wantErr(t, run(t, "", "solve", "--book", missing, "4"), "book "+missing+" does not exist")
	})
}
