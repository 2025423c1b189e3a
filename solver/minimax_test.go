package solver

import (
	"fmt"
	"testing"
)

// plainBoard is a Connect 4 board kept as a grid, written independently of
// Position to check the solver against: no bitboards, no pruning.
type plainBoard struct {
	w, h   int
	cells  [][]int8 // cells[col][row]: 0 empty, 1 first player, 2 second
	height []int
	moves  int
}

func newPlainBoard(w, h int) *plainBoard {
	pb := &plainBoard{w: w, h: h, height: make([]int, w)}
	for range w {
		pb.cells = append(pb.cells, make([]int8, h))
	}
	return pb
}

func (pb *plainBoard) player() int8 { return int8(pb.moves%2 + 1) }

func (pb *plainBoard) play(col int) {
	pb.cells[col][pb.height[col]] = pb.player()
	pb.height[col]++
	pb.moves++
}

func (pb *plainBoard) undo(col int) {
	pb.height[col]--
	pb.cells[col][pb.height[col]] = 0
	pb.moves--
}

// winsAt reports whether a stone of who at (col, row) makes four.
func (pb *plainBoard) winsAt(col, row int, who int8) bool {
	for _, d := range [][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}} {
		n := 1
		for _, sign := range []int{1, -1} {
			for k := 1; k < 4; k++ {
				c, r := col+sign*k*d[0], row+sign*k*d[1]
				if c < 0 || c >= pb.w || r < 0 || r >= pb.h || pb.cells[c][r] != who {
					break
				}
				n++
			}
		}
		if n >= 4 {
			return true
		}
	}
	return false
}

func (pb *plainBoard) key() string {
	var k []byte
	for c := range pb.w {
		for r := range pb.h {
			k = append(k, byte('0'+pb.cells[c][r]))
		}
	}
	return string(k)
}

// minimax returns the exact score by full search, memoized on the grid.
// The player to move has not lost yet.
func (pb *plainBoard) minimax(memo map[string]int) int {
	k := pb.key()
	if v, ok := memo[k]; ok {
		return v
	}
	cells := pb.w * pb.h
	best := -1000
	for c := range pb.w {
		if pb.height[c] == pb.h {
			continue
		}
		var v int
		if pb.winsAt(c, pb.height[c], pb.player()) {
			v = (cells + 1 - pb.moves) / 2
		} else if pb.moves+1 == cells {
			v = 0
		} else {
			pb.play(c)
			v = -pb.minimax(memo)
			pb.undo(c)
		}
		best = max(best, v)
	}
	if best == -1000 {
		best = 0 // full board
	}
	memo[k] = best
	return best
}

// TestSolver_Solve_smallBoards checks Solve against the plain minimax on
// every position reachable within a few plies on small boards.
func TestSolver_Solve_smallBoards(t *testing.T) {
	for _, tc := range []struct{ w, h, plies int }{
		{4, 4, 16}, // every position of the game
		{5, 4, 8},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.w, tc.h), func(t *testing.T) {
			b := MustBoard(tc.w, tc.h)
			s, err := New(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			pb := newPlainBoard(tc.w, tc.h)
			memo := map[string]int{}
			seen := map[string]bool{}
			var walk func(moves string)
			walk = func(moves string) {
				if seen[pb.key()] {
					return
				}
				seen[pb.key()] = true
				p, err := b.Parse(moves)
				if err != nil {
					t.Fatalf("Parse(%q): %v", moves, err)
				}
				want := pb.minimax(memo)
				if got := s.Solve(p); got != want {
					t.Fatalf("Solve(%q) = %d, minimax %d\n%v", moves, got, want, p)
				}
				if len(moves) == tc.plies {
					return
				}
				for c := range tc.w {
					if pb.height[c] == tc.h || pb.winsAt(c, pb.height[c], pb.player()) || pb.moves+1 == tc.w*tc.h {
						continue
					}
					pb.play(c)
					walk(moves + string(rune('1'+c)))
					pb.undo(c)
				}
			}
			walk("")
			t.Logf("%d positions checked", len(seen))
		})
	}
}
