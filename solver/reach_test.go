package solver

import (
	"testing"
)

// reachedKeys returns the keys of every position a game from root
// reaches (a game ends at a four or a full board), by playing every move.
func reachedKeys(root Position) map[uint64]bool {
	seen := map[uint64]bool{root.Key(): true}
	level := []Position{root}
	for len(level) > 0 {
		var next []Position
		for _, p := range level {
			if p.Over() {
				continue
			}
			for _, c := range p.Children() {
				if !seen[c.Key()] {
					seen[c.Key()] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return seen
}

// allKeys calls fn with every position of the board that PositionFromKey
// accepts: every column height and colouring with the stone counts of a
// game, reached or not.
func allKeys(b *Board, fn func(Position)) {
	perColumn := uint64(1) << b.stride // keys of one column: stones + 2^h - 1 < 2^(h+1)
	total := uint64(1)
	for range b.width {
		total *= perColumn
	}
	for i := range total {
		var key uint64
		for c, v := 0, i; c < b.width; c, v = c+1, v/perColumn {
			key |= (v % perColumn) << (uint(c) * b.stride)
		}
		if p, err := b.PositionFromKey(key); err == nil {
			fn(p)
		}
	}
}

// TestPosition_ReachableFrom: on boards small enough to list every key,
// ReachableFrom says yes exactly for the positions that play from the
// root reaches, from the empty board and from other roots; and MoveString
// finds a game for exactly the positions reached from the empty board.
func TestPosition_ReachableFrom(t *testing.T) {
	for _, tc := range []struct {
		w, h  int
		roots []string
	}{
		{4, 4, []string{"", "1", "12", "2213", "1234"}},
		{3, 4, []string{"", "2"}},
		{5, 3, []string{"", "3", "31"}},
	} {
		b := MustBoard(tc.w, tc.h)
		for _, moves := range tc.roots {
			root, err := b.Parse(moves)
			if err != nil {
				t.Fatal(err)
			}
			reached := reachedKeys(root)
			yes, no := 0, 0
			allKeys(b, func(p Position) {
				got := p.ReachableFrom(root)
				if got != reached[p.Key()] {
					t.Fatalf("%v root %q: ReachableFrom = %v, want %v for\n%v", b, moves, got, !got, p)
				}
				if got {
					yes++
				} else {
					no++
				}
				if moves == "" {
					s, ok := p.MoveString()
					if ok != got {
						t.Fatalf("%v: MoveString ok = %v, ReachableFrom %v for\n%v", b, ok, got, p)
					}
					if ok {
						q, err := b.Parse(s)
						if err != nil || q != p {
							t.Fatalf("%v: MoveString %q does not reach\n%v", b, s, p)
						}
					}
				}
			})
			if yes != len(reached) || no == 0 {
				t.Errorf("%v root %q: %d reached of %d, %d keys not", b, moves, yes, len(reached), no)
			}
		}
	}
}

// TestPosition_ReachableFrom_otherBoard: a root of another board reaches
// nothing.
func TestPosition_ReachableFrom_otherBoard(t *testing.T) {
	p := MustBoard(4, 4).NewPosition()
	if p.ReachableFrom(MustBoard(5, 4).NewPosition()) {
		t.Error("a root of 5x4 reaches an empty 4x4 board")
	}
}

// TestPosition_LosesNext: a position whose opponent has two playable
// fours, or whose only moves lie under one, loses next; one the player to
// move wins at once does not.
func TestPosition_LosesNext(t *testing.T) {
	for _, tc := range []struct {
		moves string
		want  bool
	}{
		{"", false},
		{"4455", false},    // nobody threatens anything yet
		{"223344", false},  // X, to move, makes four at 1 or 5 now
		{"2233447", true},  // O cannot block both of X's fours, at 1 and 5
		{"22334", true},    // nor here, and O has no four to make first
		{"17273", false},   // O blocks X's one four, at 4
		{"1727374", false}, // a game over is not lost next: it is lost
	} {
		p, err := Standard.Parse(tc.moves)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.LosesNext(); got != tc.want {
			t.Errorf("%s: LosesNext = %v, want %v\n%v", tc.moves, got, tc.want, p)
		}
	}
}
