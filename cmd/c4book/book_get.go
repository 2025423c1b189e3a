package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/posinput"
	"github.com/c4book/c4book/solver"
)

const bookGetLong = `Print the scores the book holds.

With MOVES arguments, look up each. With none, read positions from standard
input, one a line: "moves" or "moves score" (the score is ignored, so the
output of "c4book solve" can be piped in). Blank lines are skipped; the
empty board is written "-".

Each answer is a line "moves score", or "moves ?" when the book does not
hold the position. With -a it is "moves s1 ... sW": the score of each
column, seen by the player to move (as "c4book solve -a" prints it),
-1000 for a column that cannot be played and "?" for a column whose
position the book does not hold. A column that makes four, or fills the
board, needs no book.

--solve solves what the book does not hold, using the book for the
positions it holds during the search, so no "?" is printed.

A line that is not a position is reported on standard error with its
number; the other lines are still answered and the command fails at the
end. Lines are read and written in large buffers: a million lines take a
few seconds.`

const bookGetExample = `  c4book book get 4453
  c4book book get -a - 4
  c4book solve < positions | c4book book get | diff - <(c4book solve < positions)`

// newBookGetCommand builds "c4book book get".
func newBookGetCommand(a *app) *cobra.Command {
	var analyze, solve bool
	cmd := &cobra.Command{
		Use:     "get [-a] [--solve] [--book PATH] [MOVES...]",
		Short:   "Print the scores of positions from the book",
		Long:    bookGetLong,
		Example: bookGetExample,
		Args:    checkArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			opts := book.AnswerOptions{Columns: analyze}
			if solve {
				if opts.Solver, err = solver.New(bk.Board(), int64(cfg.Solver.TTSize)); err != nil {
					return closeBook(bk, fmt.Errorf("solver.tt-size: %w", err))
				}
			}
			answers, err := bk.NewAnswerer(opts)
			if err != nil {
				return closeBook(bk, err)
			}
			r := &bookGetRun{answers: answers, out: bufio.NewWriterSize(a.stdout, 64<<10)}
			in := &posinput.Input{Board: bk.Board(), Stderr: a.stderr, Bulk: true}
			err = interruptedOr(cmd.Context(), in.Run(cmd.Context(), args, a.stdin, r.answer, r.out.Flush))
			if cerr := answers.Close(); err == nil {
				err = cerr
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().BoolVarP(&analyze, "analyze", "a", false, "print the score of each column, -1000 for a column that cannot be played")
	cmd.Flags().BoolVar(&solve, "solve", false, "solve the positions the book does not hold instead of printing \"?\"")
	addTTSizeFlag(cmd.Flags())
	return cmd
}

// bookGetRun is one run of "c4book book get".
type bookGetRun struct {
	answers *book.Answerer
	out     *bufio.Writer
}

// answer writes the line answering position p, written moves. Lines are
// flushed when the buffer fills, and after a position the solver had to
// solve.
func (r *bookGetRun) answer(ctx context.Context, moves []byte, p solver.Position) error {
	solved, err := r.answers.Answer(ctx, r.out, moves, p)
	switch {
	case err != nil:
		return interruptedOr(ctx, err)
	case solved:
		return r.out.Flush()
	}
	return nil
}
