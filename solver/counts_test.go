package solver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// plyCounts are the numbers of positions after one ply, as in
// ../shared/testdata/counts-7x6.txt.
type plyCounts struct {
	total, terminal, nonterminal, totalMirror, nontermMirror int
}

// countPositions enumerates the distinct positions of b ply by ply, up to
// maxPly stones, by playing every legal move of every non-terminal
// position of the ply before.
func countPositions(b *Board, maxPly int) []plyCounts {
	counts := make([]plyCounts, maxPly+1)
	layer := map[uint64]Position{0: b.NewPosition()}
	for ply := 0; ply <= maxPly; ply++ {
		mirrors := map[uint64]bool{}
		nonterm := map[uint64]bool{}
		next := map[uint64]Position{}
		for _, p := range layer {
			c := &counts[ply]
			c.total++
			over := p.moves > 0 && p.LastMoveWon()
			mirrors[p.CanonicalKey()] = true
			if over {
				c.terminal++
				continue
			}
			c.nonterminal++
			nonterm[p.CanonicalKey()] = true
			for col := range b.width {
				if p.CanPlay(col) {
					child := p
					child.Play(col)
					next[child.Key()] = child
				}
			}
		}
		counts[ply].totalMirror = len(mirrors)
		counts[ply].nontermMirror = len(nonterm)
		layer = next
	}
	return counts
}

// readCounts reads counts-7x6.txt, next to the folder of the reference sets.
func readCounts(tb testing.TB) []plyCounts {
	tb.Helper()
	path := filepath.Join(testdataDir(tb), "..", "counts-7x6.txt")
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("position counts not found: %v", err)
	}
	defer f.Close()
	var counts []plyCounts
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || strings.HasPrefix(fields[0], "#") || fields[0] == "ply" {
			continue
		}
		var n [6]int
		for i := range n {
			if n[i], err = strconv.Atoi(fields[i]); err != nil {
				tb.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
		}
		if n[0] != len(counts) {
			tb.Fatalf("%s: ply %d out of order", path, n[0])
		}
		counts = append(counts, plyCounts{n[1], n[2], n[3], n[4], n[5]})
	}
	return counts
}

func TestBoard_positionCounts7x6(t *testing.T) {
	want := readCounts(t)
	const maxPly = 8
	got := countPositions(Standard, maxPly)
	for ply := 0; ply <= maxPly; ply++ {
		if got[ply] != want[ply] {
			t.Errorf("ply %d: got %+v, want %+v", ply, got[ply], want[ply])
		}
	}
}

// perft counts the move sequences of length depth from p that never play
// after a four.
func perft(p Position, depth int) int {
	if depth == 0 {
		return 1
	}
	if p.moves > 0 && p.LastMoveWon() {
		return 0
	}
	n := 0
	for col := range p.board.width {
		if p.CanPlay(col) {
			child := p
			child.Play(col)
			n += perft(child, depth-1)
		}
	}
	return n
}

// plainPerft is perft on the independent grid board of minimax_test.go.
func (pb *plainBoard) perft(depth int, lastWon bool) int {
	if depth == 0 {
		return 1
	}
	if lastWon {
		return 0
	}
	n := 0
	for c := range pb.w {
		if pb.height[c] == pb.h {
			continue
		}
		won := pb.winsAt(c, pb.height[c], pb.player())
		pb.play(c)
		n += pb.perft(depth-1, won)
		pb.undo(c)
	}
	return n
}

func TestPosition_perft(t *testing.T) {
	for _, tc := range []struct{ w, h, depth int }{
		{4, 4, 10}, {5, 4, 8}, {6, 5, 7}, {7, 6, 7}, {8, 7, 6}, {9, 6, 6}, {1, 4, 5},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.w, tc.h), func(t *testing.T) {
			b := MustBoard(tc.w, tc.h)
			for d := 0; d <= tc.depth; d++ {
				got := perft(b.NewPosition(), d)
				want := newPlainBoard(tc.w, tc.h).perft(d, false)
				if got != want {
					t.Errorf("perft(%d) = %d, plain board %d", d, got, want)
				}
			}
		})
	}
}
