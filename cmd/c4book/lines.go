package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/c4book/c4book/solver"
)

// Positions are read one a line, "moves" or "moves score", the format of
// Pons' test sets. The empty board is written "-" (solver.EmptyMoves).

// maxLineBytes is the longest input line read; a move string has at most
// 63 moves.
const maxLineBytes = 1 << 16

// positionLine is a line holding a position.
type positionLine struct {
	num   int             // 1-based line number
	moves string          // the move string as written; solver.EmptyMoves for the empty board
	pos   solver.Position // the position it reaches
	score string          // the second field, "" if absent
}

// parsePositionLine parses a non-blank line "moves" or "moves score" of
// a position on board b. The error says what is wrong, not where.
func parsePositionLine(b *solver.Board, num int, text string) (positionLine, error) {
	fields := strings.Fields(text)
	if len(fields) < 1 || len(fields) > 2 {
		return positionLine{}, fmt.Errorf(`want "moves" or "moves score", got %q`, strings.TrimSpace(text))
	}
	p, err := b.Parse(fields[0])
	if err != nil {
		return positionLine{}, err
	}
	l := positionLine{num: num, moves: fields[0], pos: p}
	if len(fields) == 2 {
		l.score = fields[1]
	}
	return l, nil
}

// textLine is a line of input with its 1-based number.
type textLine struct {
	num  int
	text string
}

// scanLines calls fn with each line of r that is not blank, until the end
// of r or until fn returns false. It returns the read error, if any, with
// the number of the line it happened on.
func scanLines(r io.Reader, fn func(textLine) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLineBytes)
	num := 1
	for ; sc.Scan(); num++ {
		if strings.TrimSpace(sc.Text()) != "" && !fn(textLine{num: num, text: sc.Text()}) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", num, err)
	}
	return nil
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
