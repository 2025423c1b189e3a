package solver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNewBoard(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		err  string
	}{
		{7, 6, ""}, {4, 4, ""}, {5, 4, ""}, {6, 5, ""}, {8, 7, ""}, {9, 6, ""}, {1, 1, ""},
		{0, 6, "at least 1"}, {7, 0, "at least 1"}, {10, 4, "at most 9"}, {8, 8, "at most 64"}, {9, 7, "at most 64"},
	} {
		_, err := NewBoard(tc.w, tc.h)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("NewBoard(%d, %d) = %v, want error containing %q", tc.w, tc.h, err, tc.err)
		}
	}
}

func TestBoard_order(t *testing.T) {
	for w, want := range map[int][]int{7: {3, 2, 4, 1, 5, 0, 6}, 8: {4, 3, 5, 2, 6, 1, 7, 0}, 1: {0}} {
		got := MustBoard(w, 4).order
		if len(got) != len(want) {
			t.Fatalf("width %d: order %v, want %v", w, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("width %d: order %v, want %v", w, got, want)
			}
		}
	}
}

func TestBoard_Parse_errors(t *testing.T) {
	for _, tc := range []struct {
		moves  string
		index  int
		reason string
	}{
		{"448", 2, "column out of range 1..7"},
		{"40", 1, "column out of range 1..7"},
		{"4a", 1, "not a column digit"},
		{"4 4", 1, "not a column digit"},
		{"1111111", 6, "column 1 is full"},
		{"12121213", 7, "game already over: move 7 made four"},
	} {
		_, err := Standard.Parse(tc.moves)
		var me *MoveError
		if !errors.As(err, &me) {
			t.Errorf("Parse(%q) = %v, want a *MoveError", tc.moves, err)
			continue
		}
		if me.Index != tc.index || me.Reason != tc.reason {
			t.Errorf("Parse(%q): move %d %q, want move %d %q", tc.moves, me.Index, me.Reason, tc.index, tc.reason)
		}
		if !strings.Contains(err.Error(), tc.moves) {
			t.Errorf("Parse(%q): message %q does not name the moves", tc.moves, err)
		}
	}
	// A long move string is quoted around its bad move only.
	long := strings.Repeat("ab", 10000)
	_, err := Standard.Parse(long)
	if msg := err.Error(); len(msg) > 200 || !strings.Contains(msg, `"abababab`) || !strings.Contains(msg, "... (20000 bytes; bytes 1 to 64 shown): move 1 ('a')") {
		t.Errorf("Parse of %d bytes: message %q", len(long), msg)
	}
	if got, want := quoteMoves(strings.Repeat("1", 100)+"x"+strings.Repeat("2", 100), 100), `..."1111111111111111111111111111111111111111x22222222222222222222222"... (201 bytes; bytes 61 to 124 shown)`; got != want {
		t.Errorf("quoteMoves = %s, want %s", got, want)
	}
}

func TestPosition_LastMoveWon(t *testing.T) {
	for moves, want := range map[string]bool{
		"":        false,
		"121212":  false,
		"1212121": true, // vertical
		"112233":  false,
		"1122334": true, // horizontal
	} {
		p, err := Standard.Parse(moves)
		if err != nil {
			t.Fatalf("Parse(%q): %v", moves, err)
		}
		if got := p.LastMoveWon(); got != want {
			t.Errorf("%q: LastMoveWon = %v, want %v\n%v", moves, got, want, p)
		}
	}
	// Random games on several boards, checked against the grid board.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range [][2]int{{7, 6}, {4, 4}, {8, 7}, {9, 6}, {5, 4}} {
		b := MustBoard(size[0], size[1])
		for range 2000 {
			p, pb := b.NewPosition(), newPlainBoard(size[0], size[1])
			for !p.IsFull() {
				col := rng.IntN(b.Width())
				if !p.CanPlay(col) {
					continue
				}
				want := pb.winsAt(col, pb.height[col], pb.player())
				if got := p.IsWinningMove(col); got != want {
					t.Fatalf("IsWinningMove(%d) = %v, grid board %v\n%v", col, got, want, p)
				}
				p.Play(col)
				pb.play(col)
				if got := p.LastMoveWon(); got != want {
					t.Fatalf("LastMoveWon = %v, grid board %v\n%v", got, want, p)
				}
				if want {
					break
				}
			}
		}
	}
}

// TestPosition_Over: a game is over once a stone has made four or no
// column can be played, and not before; RuleScore scores every game over.
func TestPosition_Over(t *testing.T) {
	small := MustBoard(4, 4)
	for _, tc := range []struct {
		b     *Board
		moves string
		want  bool
	}{
		{Standard, "", false},
		{Standard, "112233", false},
		{Standard, "1122334", true},       // four made
		{small, "123412344321432", false}, // one cell left
		{small, "1234123443214321", true}, // full, no four: a draw
	} {
		p, err := tc.b.Parse(tc.moves)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.moves, err)
		}
		if got := p.Over(); got != tc.want {
			t.Errorf("%q: Over = %v, want %v\n%v", tc.moves, got, tc.want, p)
		}
	}
	// Random games, played to their end, checked against the grid board.
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range [][2]int{{4, 4}, {5, 4}, {7, 6}} {
		b := MustBoard(size[0], size[1])
		for range 500 {
			p, pb := b.NewPosition(), newPlainBoard(size[0], size[1])
			won := false
			for {
				var cols []int
				for col := range b.Width() {
					if p.CanPlay(col) {
						cols = append(cols, col)
					}
				}
				want := won || len(cols) == 0
				if got := p.Over(); got != want {
					t.Fatalf("Over = %v, want %v (four made %v, %d columns playable)\n%v", got, want, won, len(cols), p)
				}
				if want {
					if _, ok := p.RuleScore(); !ok {
						t.Fatalf("a game over has no RuleScore\n%v", p)
					}
					break
				}
				col := cols[rng.IntN(len(cols))]
				won = pb.winsAt(col, pb.height[col], pb.player())
				p.Play(col)
				pb.play(col)
			}
		}
	}
}

func TestPosition_String(t *testing.T) {
	// Player 1 (X, to move) played 2 and 3, player 2 (O) 2 and 2.
	p, err := MustBoard(4, 4).Parse("2232")
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		" . . . .\n" +
		" . O . .\n" +
		" . O . .\n" +
		" . X X .\n" +
		" 1 2 3 4\n" +
		"4 moves, X to move\n"
	if got := p.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

// refPositions returns positions of the reference sets (some lines of
// each), for properties that hold of any position.
func refPositions(tb testing.TB, perSet int) []string {
	var all []string
	for _, set := range refSets {
		for _, c := range readRefSet(tb, set.name, perSet) {
			all = append(all, c.moves)
		}
	}
	return all
}

func TestPosition_keys(t *testing.T) {
	for _, moves := range refPositions(t, 100) {
		p, err := Standard.Parse(moves)
		if err != nil {
			t.Fatal(err)
		}
		// The mirror of the moves reaches the mirror of the position.
		var mirrored strings.Builder
		for _, c := range moves {
			mirrored.WriteRune('1' + '7' - c)
		}
		m, err := Standard.Parse(mirrored.String())
		if err != nil {
			t.Fatal(err)
		}
		mp := p.Mirror()
		if m.Key() != p.MirrorKey() || mp.Key() != m.Key() || m.CanonicalKey() != p.CanonicalKey() {
			t.Errorf("%s: mirror keys disagree", moves)
		}
		if p.CanonicalKey() != min(p.Key(), m.Key()) {
			t.Errorf("%s: canonical key is not the smaller key", moves)
		}
		// The key rebuilds the position.
		q, err := Standard.PositionFromKey(p.Key())
		if err != nil || q != p {
			t.Errorf("%s: PositionFromKey(Key()) = %v, %v; want\n%v", moves, q, err, p)
		}
		// A move string found from the position reaches it again.
		s, ok := p.MoveString()
		if !ok {
			t.Errorf("%s: MoveString found no game", moves)
			continue
		}
		if r, err := Standard.Parse(s); err != nil || r != p {
			t.Errorf("%s: MoveString %q reaches another position (%v)", moves, s, err)
		}
	}
}

func TestBoard_PositionFromKey_errors(t *testing.T) {
	b := MustBoard(4, 4)
	for _, key := range []uint64{
		1 << 20,           // beyond 4*5 bits
		0b11111,           // column 1 holds 5 stones on a 4-high board
		0b00011,           // one stone, of the player to move
		0b00101 | 0b11<<5, // two stones in column 1, one of each player, plus one in column 2 of the player to move
	} {
		if p, err := b.PositionFromKey(key); err == nil {
			t.Errorf("PositionFromKey(%#b) = \n%v, want an error", key, p)
		}
	}
}

func TestPosition_MoveString_unreachable(t *testing.T) {
	// Both players have four: no game reaches this.
	b := MustBoard(4, 4)
	p := Position{board: b, current: 0b1111, mask: 0b1111 | 0b1111<<5, moves: 8}
	if s, ok := p.MoveString(); ok {
		t.Errorf("MoveString = %q for a position no game reaches", s)
	}
}

func FuzzBoard_Parse(f *testing.F) {
	for _, s := range []string{"", "4453", "1111111", "12121213", "0", "9", "44a", "\xff", "32164625"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, moves string) {
		p, err := Standard.Parse(moves)
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) || me.Index < 0 || me.Index >= len(moves) || me.Reason == "" {
				t.Fatalf("Parse(%q): bad error %v", moves, err)
			}
			return
		}
		if p.Moves() != len(moves) {
			t.Fatalf("Parse(%q): %d moves", moves, p.Moves())
		}
		q, err := Standard.PositionFromKey(p.Key())
		if err != nil || q != p {
			t.Fatalf("Parse(%q): key does not rebuild the position", moves)
		}
	})
}

// TestBoard_ParseBytes: the bytes of a move string parse as the string
// does, errors included, and a good one allocates nothing (book get
// reads millions of lines).
func TestBoard_ParseBytes(t *testing.T) {
	for _, moves := range []string{"", EmptyMoves, "4453", "448", "1111111", "12121213", "-4"} {
		p, err := Standard.Parse(moves)
		q, errBytes := Standard.ParseBytes([]byte(moves))
		if p != q || fmt.Sprint(err) != fmt.Sprint(errBytes) {
			t.Errorf("%q: Parse %v, %v; ParseBytes %v, %v", moves, p, err, q, errBytes)
		}
	}
	line := []byte("44444433")
	if n := testing.AllocsPerRun(10, func() { Standard.ParseBytes(line) }); n != 0 {
		t.Errorf("ParseBytes allocates %v times", n)
	}
}

// TestBoard_Parse_empty: "" and EmptyMoves are the empty board, which
// FormatMoves writes EmptyMoves.
func TestBoard_Parse_empty(t *testing.T) {
	for _, moves := range []string{"", EmptyMoves} {
		p, err := Standard.Parse(moves)
		empty := Standard.NewPosition()
		if err != nil || p.Moves() != 0 || p.Key() != empty.Key() {
			t.Errorf("Parse(%q) = %v, %v: want the empty board", moves, p, err)
		}
	}
	if _, err := Standard.Parse("-4"); err == nil {
		t.Error(`Parse("-4") succeeded: "-" is the empty board only alone`)
	}
	if got := FormatMoves(""); got != EmptyMoves {
		t.Errorf(`FormatMoves("") = %q, want %q`, got, EmptyMoves)
	}
	if got := FormatMoves("4453"); got != "4453" {
		t.Errorf(`FormatMoves("4453") = %q`, got)
	}
}
