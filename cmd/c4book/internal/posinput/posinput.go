// Package posinput reads the positions a command answers (c4book solve,
// c4book book get): its arguments, or the lines of standard input, one
// position a line.
package posinput

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/ctxio"
	"github.com/c4book/c4book/solver"
)

// Input is the input of a command that answers positions: positions given
// as arguments, or read from standard input one a line, "moves" or "moves
// score" (bookfile.ParsePositionLine). An input that is not a position is
// reported on Stderr with its number, and the others are still answered;
// the run then fails at the end.
type Input struct {
	Board  *solver.Board
	Stderr io.Writer
	// Bulk says that lines are many and each is answered in a moment (book
	// get: a lookup): a line is parsed without allocating, and the context
	// is looked at every 4096 lines, not before each.
	Bulk bool
	bad  int // inputs that are not positions
}

// AnswerFunc answers position p, written moves.
type AnswerFunc func(ctx context.Context, moves []byte, p solver.Position) error

// Run answers args, or the lines of stdin if there is none, and then
// calls flush. Stopped by ctx, it returns ctx's error.
func (in *Input) Run(ctx context.Context, args []string, stdin io.Reader, answer AnswerFunc, flush func() error) error {
	n, what := len(args), "arguments"
	var err error
	if len(args) > 0 {
		err = in.answerArgs(ctx, args, answer)
	} else {
		if console.IsTerminal(stdin) {
			fmt.Fprintln(in.Stderr, "Reading positions from standard input, one a line; end with Ctrl-D.")
		}
		what = "lines"
		n, err = in.answerLines(ctx, stdin, answer)
	}
	if err == nil {
		err = flush()
	}
	if err == nil && in.bad > 0 {
		err = fmt.Errorf("%d of %d %s are not positions (see the messages above)", in.bad, n, what)
	}
	return err
}

// answerArgs answers each argument.
func (in *Input) answerArgs(ctx context.Context, args []string, answer AnswerFunc) error {
	for i, moves := range args {
		if err := ctx.Err(); err != nil {
			return err
		}
		moves = strings.TrimSpace(moves) // as lines are
		p, err := in.Board.Parse(moves)
		if err != nil {
			in.bad++
			fmt.Fprintf(in.Stderr, "argument %d: %v\n", i+1, err)
			continue
		}
		if err := answer(ctx, []byte(solver.FormatMoves(moves)), p); err != nil {
			return err
		}
	}
	return nil
}

// answerLines answers each line of r that holds something, and returns
// their number. In bulk, lines are scanned in place, and the moves of a
// good line are played without a conversion to a string: a line costs an
// answer and a few hundred nanoseconds more.
func (in *Input) answerLines(ctx context.Context, r io.Reader, answer AnswerFunc) (n int, err error) {
	cr := ctxio.NewReader(ctx, r)
	defer cr.Close()
	checkEvery := 1
	if in.Bulk {
		checkEvery = 4096
	}
	var answerErr error
	err = bookfile.ScanLines(cr, func(l bookfile.Line) bool {
		if l.Ignorable() {
			return true
		}
		n++
		if n%checkEvery == 0 && ctx.Err() != nil {
			answerErr = ctx.Err()
			return false
		}
		var moves []byte
		var p solver.Position
		ok := false
		if in.Bulk && !l.TooLong {
			moves, p, ok = bookfile.ParsePositionBytes(in.Board, bytes.TrimSpace(l.Text))
		}
		if !ok {
			// The slow path says what is wrong (or, should the fast one
			// have refused a good line, answers it).
			pl, err := bookfile.ParsePositionLine(in.Board, l)
			if err != nil {
				in.bad++
				fmt.Fprintf(in.Stderr, "line %d: %v\n", l.Num, err)
				return true
			}
			moves, p = []byte(pl.Moves), pl.Pos
		}
		answerErr = answer(ctx, moves, p)
		return answerErr == nil
	})
	switch {
	case answerErr != nil:
		return n, answerErr
	case errors.Is(err, ctxio.ErrStopped):
		return n, ctx.Err()
	}
	return n, err
}
