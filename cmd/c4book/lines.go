package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Positions are read one a line, "moves" or "moves score", the format of
// Pons' test sets. The empty board is written "-" (solver.EmptyMoves).

// positionLine is a line holding a position.
type positionLine struct {
	num   int             // 1-based line number
	moves string          // the move string as written; solver.EmptyMoves for the empty board
	pos   solver.Position // the position it reaches
	score string          // the second field, "" if absent
}

// parsePositionLine parses a line "moves" or "moves score" of a position
// on board b. The error says what is wrong, not where.
func parsePositionLine(b *solver.Board, l textLine) (positionLine, error) {
	if l.tooLong {
		return positionLine{}, fmt.Errorf("longer than %d bytes, not a position: %s", book.MaxLineBytes, l.quoted)
	}
	fields := strings.Fields(l.text)
	if len(fields) < 1 || len(fields) > 2 {
		return positionLine{}, fmt.Errorf(`want "moves" or "moves score", got %s`, l.quoted)
	}
	p, err := b.Parse(fields[0])
	if err != nil {
		return positionLine{}, err
	}
	pl := positionLine{num: l.num, moves: fields[0], pos: p}
	if len(fields) == 2 {
		pl.score = fields[1]
	}
	return pl, nil
}

// textLine is a line of input with its 1-based number.
type textLine struct {
	num     int
	text    string // the first bytes only, if tooLong
	tooLong bool   // longer than book.MaxLineBytes
	quoted  string // the line quoted for messages, up to 40 bytes of it
}

// scanLines calls fn with each line of r that holds something (not blank,
// not a comment: see book.Line.Ignorable), until the end of r or until fn
// returns false. Lines of any length are read. It returns the read error,
// if any, with the number of the line it happened on.
func scanLines(r io.Reader, fn func(textLine) bool) error {
	return book.ScanLines(r, func(l book.Line) bool {
		return l.Ignorable() || fn(textLine{num: l.Num, text: string(l.Text), tooLong: l.TooLong, quoted: l.Quote()})
	})
}

// readLines runs scanLines in a goroutine and sends the lines on the
// returned channel, so that a caller waiting for input notices when ctx
// ends. The channel is closed at the end of r or when ctx ends; then *errp
// holds the read error, if any.
func readLines(ctx context.Context, r io.Reader) (lines <-chan textLine, errp *error) {
	ch := make(chan textLine)
	errp = new(error)
	go func() {
		defer close(ch)
		*errp = scanLines(r, func(l textLine) bool {
			select {
			case ch <- l:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return ch, errp
}
