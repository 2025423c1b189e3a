package solver

import "testing"

func TestTableScore_roundTrip(t *testing.T) {
	for score := -32; score <= 32; score++ {
		field := toTableScore(score)
		if field >= 1<<scoreBits {
			t.Fatalf("score %d: field %d does not fit %d bits", score, field, scoreBits)
		}
		if got := fromTableScore(field); got != score {
			t.Errorf("fromTableScore(toTableScore(%d)) = %d", score, got)
		}
	}
}

func TestBoard_scores(t *testing.T) {
	b := Standard
	// Pons' convention on 7x6: the fastest win, with the 4th stone, is 18.
	if got := b.WinNowScore(6); got != 18 {
		t.Errorf("WinNowScore(6) = %d, want 18", got)
	}
	if got := b.WinNowScore(41); got != 1 {
		t.Errorf("WinNowScore(41) = %d, want 1 (win with the last stone)", got)
	}
	for moves := 1; moves <= b.Cells(); moves++ {
		if b.LostScore(moves) != -b.WinNowScore(moves-1) {
			t.Errorf("LostScore(%d) is not minus the winner's score", moves)
		}
	}
	for moves := 0; moves < b.Cells(); moves++ {
		lo, hi := b.ScoreRange(moves)
		if lo > 0 || hi < 0 && moves < b.Cells() {
			t.Errorf("ScoreRange(%d) = [%d, %d] excludes a draw", moves, lo, hi)
		}
		if next := moves + 1; next < b.Cells() {
			// After a move, the opponent's range is the negation of a
			// subset of ours.
			clo, chi := b.ScoreRange(next)
			if -chi < lo || -clo > hi {
				t.Errorf("ScoreRange(%d) = [%d, %d] does not hold the child's [%d, %d] negated", moves, lo, hi, clo, chi)
			}
		}
	}
	for score, want := range map[int]int{-5: -1, 0: 0, 3: 1} {
		if got := Outcome(score); got != want {
			t.Errorf("Outcome(%d) = %d, want %d", score, got, want)
		}
	}
}

// TestBoard_PliesToEnd checks PliesToEnd against the scores of wins and
// losses with each stone, on boards of both parities of cells.
func TestBoard_PliesToEnd(t *testing.T) {
	for _, size := range [][2]int{{7, 6}, {5, 4}, {3, 3}} {
		b, err := NewBoard(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		for moves := 0; moves < b.Cells(); moves++ {
			for n := 1; 2*n-1 <= b.Cells()-moves; n++ {
				if got := b.PliesToEnd(moves, b.winWithStone(moves, n)); got != 2*n-1 {
					t.Errorf("%v, %d stones: a win with stone %d ends in %d moves, want %d", b, moves, n, got, 2*n-1)
				}
				if 2*n > b.Cells()-moves {
					continue
				}
				if got := b.PliesToEnd(moves, b.lossWithStone(moves, n)); got != 2*n {
					t.Errorf("%v, %d stones: a loss to stone %d ends in %d moves, want %d", b, moves, n, got, 2*n)
				}
			}
			// Stones too far beyond the last bound nothing.
			for n := (b.Cells()-moves+3)/2 + 1; n <= (b.Cells()-moves+3)/2+3; n++ {
				if got := b.winWithStone(moves, n); got <= MaxScore {
					t.Errorf("%v, %d stones: a win with stone %d scores %d, want above %d", b, moves, n, got, MaxScore)
				}
			}
			for n := (b.Cells()-moves+2)/2 + 1; n <= (b.Cells()-moves+2)/2+3; n++ {
				if got := b.lossWithStone(moves, n); got >= -MaxScore {
					t.Errorf("%v, %d stones: a loss to stone %d scores %d, want below %d", b, moves, n, got, -MaxScore)
				}
			}
			if got := b.PliesToEnd(moves, 0); got != b.Cells()-moves {
				t.Errorf("%v, %d stones: a draw ends in %d moves, want %d", b, moves, got, b.Cells()-moves)
			}
		}
	}
	// Pons' convention on 7x6: 18 on the empty board is a win with the
	// first player's 4th stone, the 7th move.
	if got := Standard.PliesToEnd(0, 18); got != 7 {
		t.Errorf("PliesToEnd(0, 18) = %d, want 7", got)
	}
}

// TestPosition_RuleScore checks RuleScore and RuleMoveScore against the
// plain grid board on every position of the 4x4 game and of the first
// plies of 5x4, finished games included: a game lost to the last stone,
// a full board, a win with the next stone, and nothing else.
func TestPosition_RuleScore(t *testing.T) {
	for _, tc := range []struct{ w, h, plies int }{{4, 4, 16}, {5, 4, 8}} {
		b := MustBoard(tc.w, tc.h)
		cells := tc.w * tc.h
		pb := newPlainBoard(tc.w, tc.h)
		seen := map[string]bool{}
		var walk func(p Position, lost bool)
		walk = func(p Position, lost bool) {
			if seen[pb.key()] {
				return
			}
			seen[pb.key()] = true
			winNow := -1 // a column whose stone makes four, if any
			for c := range tc.w {
				if pb.height[c] < tc.h && pb.winsAt(c, pb.height[c], pb.player()) {
					winNow = c
				}
			}
			var want int
			wantOK := true
			switch {
			case lost:
				want = -(cells + 2 - pb.moves) / 2 // the winner's score one stone earlier
			case pb.moves == cells:
				want = 0
			case winNow >= 0:
				want = (cells + 1 - pb.moves) / 2
			default:
				wantOK = false
			}
			if got, ok := p.RuleScore(); got != want || ok != wantOK {
				t.Fatalf("%dx%d: RuleScore() = %d, %v; want %d, %v\n%v", tc.w, tc.h, got, ok, want, wantOK, p)
			}
			if lost || pb.moves == cells {
				return
			}
			for col, child := range p.Children() {
				wins := pb.winsAt(col, pb.height[col], pb.player())
				want, wantOK := 0, true
				switch {
				case wins:
					want = (cells + 1 - pb.moves) / 2
				case pb.moves+1 == cells:
					want = 0
				default:
					wantOK = false
				}
				if got, ok := p.RuleMoveScore(col); got != want || ok != wantOK {
					t.Fatalf("%dx%d: RuleMoveScore(%d) = %d, %v; want %d, %v\n%v", tc.w, tc.h, col+1, got, ok, want, wantOK, p)
				}
				if pb.moves < tc.plies {
					pb.play(col)
					walk(child, wins)
					pb.undo(col)
				}
			}
		}
		walk(b.NewPosition(), false)
		t.Logf("%dx%d: %d positions", tc.w, tc.h, len(seen))
	}
}
