package solver

import (
	"fmt"
)

// MoveError says which move of a move string cannot be played and why.
type MoveError struct {
	Moves  string // the whole move string
	Index  int    // 0-based index of the bad move in Moves
	Reason string // what is wrong with it
}

func (e *MoveError) Error() string {
	return fmt.Sprintf("moves %s: move %d (%q): %s", quoteMoves(e.Moves, e.Index), e.Index+1, e.Moves[e.Index], e.Reason)
}

// Quoting of long move strings in errors: a move string of up to
// maxQuotedMoves bytes is quoted whole; a longer one (a line of garbage,
// a megabyte sent to a server) by the bytes around its bad move, and its
// length, so that a message stays short.
const (
	maxQuotedMoves = 64
	quotedBefore   = 40 // bytes shown before the bad move
)

// quoteMoves quotes moves for an error about its move at index i.
func quoteMoves(moves string, i int) string {
	if len(moves) <= maxQuotedMoves {
		return fmt.Sprintf("%q", moves)
	}
	lo := max(0, i-quotedBefore)
	hi := min(len(moves), lo+maxQuotedMoves)
	s := fmt.Sprintf("%q", moves[lo:hi])
	if lo > 0 {
		s = "..." + s
	}
	if hi < len(moves) {
		s += "..."
	}
	return fmt.Sprintf("%s (%d bytes; bytes %d to %d shown)", s, len(moves), lo+1, hi)
}

// EmptyMoves is how the empty board's move string is written where an
// empty string would not do: as a field of a line, or an argument.
const EmptyMoves = "-"

// FormatMoves returns moves, or EmptyMoves for the empty board's.
func FormatMoves(moves string) string {
	if moves == "" {
		return EmptyMoves
	}
	return moves
}

// Parse plays a move string, one 1-based column digit a move as in Pascal
// Pons' test sets ("4453"), from the empty board; "" and EmptyMoves are the
// empty board. It returns a *MoveError naming the first move that is not a
// column of the board, is in a full column or comes after a four was made.
// The last move may make four: the position is then over (see
// LastMoveWon).
func (b *Board) Parse(moves string) (Position, error) { return parse(b, moves) }

// ParseBytes is Parse of a move string held in bytes, such as a line
// read from a file: it allocates nothing unless it fails.
func (b *Board) ParseBytes(moves []byte) (Position, error) { return parse(b, moves) }

// parse is Parse and ParseBytes.
func parse[S string | []byte](b *Board, moves S) (Position, error) {
	p := b.NewPosition()
	if string(moves) == EmptyMoves {
		return p, nil
	}
	if err := playMoves(&p, moves); err != nil {
		return Position{}, err
	}
	return p, nil
}

// PlayMoves plays a move string from p; see Board.Parse. On error p is left
// at the position before the bad move.
func (p *Position) PlayMoves(moves string) error { return playMoves(p, moves) }

// playMoves is PlayMoves of a string or bytes. The error, and the copy of
// the moves it holds, are made only for a bad move.
func playMoves[S string | []byte](p *Position, moves S) error {
	for i := 0; i < len(moves); i++ {
		fail := func(format string, args ...any) error {
			return &MoveError{Moves: string(moves), Index: i, Reason: fmt.Sprintf(format, args...)}
		}
		c := moves[i]
		if c < '0' || c > '9' {
			return fail("not a column digit")
		}
		col := int(c - '1')
		switch {
		case col < 0 || col >= p.board.width:
			return fail("column out of range 1..%d", p.board.width)
		case p.moves > 0 && p.LastMoveWon():
			return fail("game already over: move %d made four", i)
		case !p.CanPlay(col):
			return fail("column %d is full", col+1)
		}
		p.Play(col)
	}
	return nil
}

// MoveString returns a move string that reaches p from the empty board, or
// false if no game reaches p. Of the possible strings it returns the one
// whose last moves are leftmost.
func (p *Position) MoveString() (string, bool) {
	u := unplayer{moves: make([]byte, p.moves), fours: p.anyFour()}
	if !u.unplay(*p) {
		return "", false
	}
	return string(u.moves), true
}
