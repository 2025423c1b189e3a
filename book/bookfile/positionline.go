package bookfile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/c4book/c4book/solver"
)

// Position lines are the input of the commands that take positions
// (c4book solve, book get, bench): one position a line, "moves" or "moves
// score", the format of Pons' test sets and of the text export. The empty
// board is written solver.EmptyMoves, "-".

// PositionLine is a line holding a position.
type PositionLine struct {
	Num   int             // 1-based line number
	Moves string          // the move string as written; solver.EmptyMoves for the empty board
	Pos   solver.Position // the position it reaches
	Score string          // the second field, "" if absent
}

// ParsePositionLine parses l, a line "moves" or "moves score" of a
// position on board b. The error says what is wrong, not where.
func ParsePositionLine(b *solver.Board, l Line) (PositionLine, error) {
	if l.TooLong {
		return PositionLine{}, fmt.Errorf("longer than %d bytes, not a position: %s", MaxLineBytes, l.Quote())
	}
	fields := strings.Fields(string(l.Text))
	if len(fields) < 1 || len(fields) > 2 {
		return PositionLine{}, fmt.Errorf(`want "moves" or "moves score", got %s`, l.Quote())
	}
	p, err := b.Parse(fields[0])
	if err != nil {
		return PositionLine{}, err
	}
	pl := PositionLine{Num: l.Num, Moves: fields[0], Pos: p}
	if len(fields) == 2 {
		pl.Score = fields[1]
	}
	return pl, nil
}

// ParsePositionBytes parses line, a trimmed, non-blank line "moves" or
// "moves score", without allocating, and returns its moves and their
// position. It returns false for anything else, and for a move string
// that cannot be played: ParsePositionLine then says why.
func ParsePositionBytes(b *solver.Board, line []byte) (moves []byte, p solver.Position, ok bool) {
	moves = line
	if i := bytes.IndexAny(line, " \t"); i >= 0 {
		moves = line[:i]
		if rest := bytes.TrimSpace(line[i:]); bytes.ContainsAny(rest, " \t") {
			return nil, p, false
		}
	}
	p, err := b.ParseBytes(moves)
	return moves, p, err == nil
}
