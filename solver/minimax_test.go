package solver

import (
	"fmt"
	"math/rand/v2"
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
				// The static bounds hold where the search uses them.
				if !p.CanWinNext() && p.nonLosingMoves() != 0 && p.Moves() < tc.w*tc.h-2 {
					if lo, hi := s.staticBounds(&p, p.opponentWinningCells(), 64, -64); want < lo || want > hi {
						t.Fatalf("%q: static bounds [%d, %d], score %d\n%v", moves, lo, hi, want, p)
					}
					if wins := expandWins(s, p); wins != (want == b.winWithStone(p.Moves(), 2)) {
						t.Fatalf("%q: expand says wins %v, score %d\n%v", moves, wins, want, p)
					}
					if tc.h%2 == 0 && p.Moves()%2 == 0 {
						if ub := s.evensBound(&p); want > ub {
							t.Fatalf("%q: evens bound %d, score %d\n%v", moves, ub, want, p)
						}
					}
					if tc.h%2 == 0 && p.Moves()%2 == 1 {
						if ub := s.oddThreatBound(&p, p.opponentWinningCells()); want > ub {
							t.Fatalf("%q: odd threat bound %d, score %d\n%v", moves, ub, want, p)
						}
					}
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

// expandWins reports what expand says of p: whether its player has a
// move that leaves the opponent no answer. Precondition: p's player cannot
// make four at once.
func expandWins(s *Solver, p Position) bool {
	var n line
	n.setPosition(&p)
	n.next = p.nonLosingMoves()
	_, wins := s.expand(&n)
	return wins
}

// TestSolver_expand checks the rule of expand against the plain minimax
// on random positions: the player to move has a move that leaves the
// opponent no answer exactly when the score is a four with their second
// stone (none with the first is possible).
func TestSolver_expand(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, size := range [][2]int{{7, 6}, {6, 5}, {5, 4}} {
		b := MustBoard(size[0], size[1])
		s, _ := New(b, 1<<20)
		checked, wins := 0, 0
		for checked < 400 {
			p, pb, ok := randomPosition(rng, b, b.Cells()-10-rng.IntN(3))
			if !ok {
				continue
			}
			checked++
			want := pb.minimax(map[string]int{})
			got := expandWins(s, p)
			if got != (want == b.winWithStone(p.Moves(), 2)) {
				t.Fatalf("%dx%d: expand says wins %v, score %d\n%v", size[0], size[1], got, want, p)
			}
			if got {
				wins++
			}
		}
		if wins == 0 {
			t.Errorf("%dx%d: no position of %d won this way: the check tests nothing", size[0], size[1], checked)
		}
		t.Logf("%dx%d: %d positions, %d won with the second stone", size[0], size[1], checked, wins)
	}
}

// randomPosition plays random moves on b up to target stones, and returns
// the position, the same as a plainBoard, and whether it is one the search
// takes: target stones, its player cannot win at once and has a move that
// does not lose at once. It stops early once a game is decided.
func randomPosition(rng *rand.Rand, b *Board, target int) (Position, *plainBoard, bool) {
	p, pb := b.NewPosition(), newPlainBoard(b.Width(), b.height)
	for p.Moves() < target && !p.CanWinNext() && p.nonLosingMoves() != 0 {
		col := rng.IntN(b.Width())
		if !p.CanPlay(col) {
			continue
		}
		p.Play(col)
		pb.play(col)
	}
	return p, pb, p.Moves() == target && !p.CanWinNext() && p.nonLosingMoves() != 0
}

// TestSolver_evensBound checks the evens strategy's bound against the plain
// minimax on random positions of boards with an even number of rows, late
// enough for the minimax to be quick.
func TestSolver_evensBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range [][2]int{{6, 4}, {7, 4}, {5, 6}} {
		b := MustBoard(size[0], size[1])
		s, _ := New(b, 1<<20)
		checked, bounded := 0, 0
		for checked < 300 {
			p, pb, ok := randomPosition(rng, b, b.Cells()-10-2*rng.IntN(2))
			if !ok {
				continue
			}
			checked++
			want := pb.minimax(map[string]int{})
			ub := s.evensBound(&p)
			if want > ub {
				t.Fatalf("%dx%d: evens bound %d, score %d\n%v", size[0], size[1], ub, want, p)
			}
			if ub <= 0 {
				bounded++
			}
		}
		if bounded == 0 {
			t.Errorf("%dx%d: the bound decided none of %d positions: the check tests nothing", size[0], size[1], checked)
		}
		t.Logf("%dx%d: %d positions, %d bounded", size[0], size[1], checked, bounded)
	}
}

// TestSolver_oddThreatBound checks the odd threat's bound against the
// plain minimax on random positions of boards with an even number of rows.
func TestSolver_oddThreatBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range [][2]int{{6, 4}, {7, 4}, {5, 6}, {7, 6}} {
		checkOddThreatBound(t, rng, MustBoard(size[0], size[1]), 400, nil)
	}
}

// TestSolver_oddThreatBound_evenColumn checks the odd threat's bound on
// positions whose odd threats all lie in columns of even height, where the
// first player must first take the column's parity (see oddThreatBound).
// A bound that gave the second player only the even cells of such a column
// below the threat is wrong, and fails here.
func TestSolver_oddThreatBound_evenColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	evenColumnsOnly := func(p *Position) bool {
		b, possible := p.board, p.possible()
		threats := p.opponentWinningCells() & b.oddRows & b.above(possible)
		return threats != 0 && threats&b.above(possible&^b.oddRows) == 0
	}
	for _, size := range [][2]int{{6, 4}, {7, 4}} {
		checkOddThreatBound(t, rng, MustBoard(size[0], size[1]), 300, evenColumnsOnly)
	}
}

// checkOddThreatBound checks the odd threat's bound against the plain
// minimax on n random positions of b with an odd number of stones, late
// enough for the minimax to be quick, that keep (if not nil) accepts; it
// fails the test if the bound decided none of them (a loss).
func checkOddThreatBound(t *testing.T, rng *rand.Rand, b *Board, n int, keep func(*Position) bool) {
	t.Helper()
	s, _ := New(b, 1<<20)
	checked, bounded := 0, 0
	for checked < n {
		p, pb, ok := randomPosition(rng, b, b.Cells()-11-2*rng.IntN(2))
		if !ok || keep != nil && !keep(&p) {
			continue
		}
		checked++
		want := pb.minimax(map[string]int{})
		ub := s.oddThreatBound(&p, p.opponentWinningCells())
		if want > ub {
			t.Fatalf("%dx%d: odd threat bound %d, score %d\n%v", b.Width(), b.height, ub, want, p)
		}
		if ub < 0 {
			bounded++
		}
	}
	if bounded == 0 {
		t.Errorf("%dx%d: the bound decided none of %d positions: the check tests nothing", b.Width(), b.height, checked)
	}
	t.Logf("%dx%d: %d positions, %d bounded", b.Width(), b.height, checked, bounded)
}

// gridKey computes the key of the grid board pb the slow way, cell by
// cell, independently of Position's incremental updates: for each column,
// the stones of the player to move plus 2^height - 1.
func gridKey(pb *plainBoard) uint64 {
	var key uint64
	toMove := pb.player()
	for c := range pb.w {
		var col uint64
		for r := range pb.height[c] {
			if pb.cells[c][r] == toMove {
				col |= 1 << uint(r)
			}
		}
		col += 1<<uint(pb.height[c]) - 1
		key |= col << (uint(c) * uint(pb.h+1))
	}
	return key
}

// TestPosition_Key_incremental: after every move of random games, the key
// kept by Play equals the key computed from the grid.
func TestPosition_Key_incremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range [][2]int{{7, 6}, {8, 7}, {4, 4}, {9, 6}, {6, 5}} {
		b := MustBoard(size[0], size[1])
		for range 500 {
			p, pb := b.NewPosition(), newPlainBoard(size[0], size[1])
			for !p.Over() {
				col := rng.IntN(b.Width())
				if !p.CanPlay(col) {
					continue
				}
				p.Play(col)
				pb.play(col)
				if p.Key() != gridKey(pb) {
					t.Fatalf("%dx%d: key %#x, grid key %#x\n%v", size[0], size[1], p.Key(), gridKey(pb), p)
				}
			}
		}
	}
}

// TestSolver_Solve_largeBoards checks Solve against the plain minimax on
// random late positions of the largest boards, 8x7 and 9x6, and of 6x5.
func TestSolver_Solve_largeBoards(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, size := range [][2]int{{8, 7}, {9, 6}, {6, 5}} {
		b := MustBoard(size[0], size[1])
		s, _ := New(b, 16<<20)
		for checked := 0; checked < 40; {
			p, pb := b.NewPosition(), newPlainBoard(size[0], size[1])
			target := b.Cells() - 9
			for p.Moves() < target && !p.CanWinNext() {
				col := rng.IntN(b.Width())
				if p.CanPlay(col) && !p.IsWinningMove(col) {
					p.Play(col)
					pb.play(col)
				}
			}
			if p.Moves() != target {
				continue
			}
			checked++
			if got, want := s.Solve(p), pb.minimax(map[string]int{}); got != want {
				t.Fatalf("%dx%d: Solve = %d, minimax %d\n%v", size[0], size[1], got, want, p)
			}
		}
	}
}
