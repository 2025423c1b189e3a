package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/books"
	"github.com/c4book/c4book/cmd/c4book/internal/posinput"
	"github.com/c4book/c4book/solver"
)

const solveLong = `Print the score of positions.

With MOVES arguments, solve each. With none, read positions from standard
input, one a line: "moves" or "moves score" (the score is ignored, so Pons'
test sets can be piped in). Blank lines are skipped. The empty board is
written "-" (or given as the argument "").

Each answer is a line "moves score", written as soon as it is found. The
transposition table stays warm from one position to the next.

A line that is not a position is reported on standard error with its
number; the other lines are still answered and the command fails at the
end.

An opening book answers a position it holds at once, and the search asks
it about every position it meets with no more stones than the book's
deepest, so only the part of the game below the book is searched. By
default that is the deepest book shipped with c4book for the board (on
7x6, every position of up to 14 stones); --book PATH reads a book of
yours (a Pebble book's directory or a packed book's file, of the board
being solved), --no-book none: the solver alone, as "c4book bench"
measures it. --nodes prints the number of nodes searched for each
position on standard error.`

const solveExample = `  c4book solve 4453
  c4book solve -a 4453
  c4book solve -w 4453 2252576253462244111563365343671351441
  c4book solve < Test_L3_R1 | diff - Test_L3_R1
  c4book solve --book c4book.db -a 44
  c4book solve --no-book --nodes 4453`

// newSolveCommand builds "c4book solve".
func newSolveCommand(a *app) *cobra.Command {
	var weak, analyze, nodes, noBook bool
	var bookPath string
	cmd := &cobra.Command{
		Use:     "solve [-w | -a] [--book PATH | --no-book] [--tt-size SIZE] [--threads N] [MOVES...]",
		Short:   "Print the exact score of positions",
		Long:    solveLong,
		Example: solveExample,
		Args:    checkArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if weak && analyze {
				return newUsageError(cmd, errors.New("-w (--weak) and -a (--analyze) cannot be used together"))
			}
			if noBook && bookPath != "" {
				return newUsageError(cmd, errors.New("--book and --no-book cannot be used together"))
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			s, err := newSolver(cfg)
			if err != nil {
				return err
			}
			defer startHelpers(s, cfg.Solver.Threads)()
			r := &solveRun{s: s, weak: weak, analyze: analyze, nodes: nodes, out: bufio.NewWriter(a.stdout), stderr: a.stderr}
			in := &posinput.Input{Board: s.Board(), Stderr: a.stderr}
			var bk *book.Book
			switch {
			case bookPath != "":
				bk, err = openBook(cmd, cfg, bookPath, bookReadOnly)
			case !noBook:
				// The shipped book, if one ships for the board.
				if _, ok, _ := books.Deepest(s.Board()); ok {
					bk, err = openShipped(cfg)
				}
			}
			if err != nil {
				return err
			}
			if bk == nil {
				return interruptedOr(cmd.Context(), in.Run(cmd.Context(), args, a.stdin, r.answer, r.out.Flush))
			}
			if r.oracle, err = useBook(s, bk); err != nil {
				return closeBook(bk, err)
			}
			err = interruptedOr(cmd.Context(), in.Run(cmd.Context(), args, a.stdin, r.answer, r.out.Flush))
			if cerr := r.oracle.Close(); err == nil {
				err = cerr
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().BoolVarP(&weak, "weak", "w", false, "print the weak score: 1 win, 0 draw, -1 loss")
	cmd.Flags().BoolVarP(&analyze, "analyze", "a", false, "print the score of each column, -1000 for a column that cannot be played")
	cmd.Flags().StringVar(&bookPath, "book", "", "answer from the opening book at `PATH` and use it during the search (default: the deepest book shipped for the board)")
	cmd.Flags().BoolVar(&noBook, "no-book", false, "solve without a book, not even the shipped one")
	cmd.Flags().BoolVar(&nodes, "nodes", false, "print the nodes searched for each position on standard error")
	addTTSizeFlag(cmd.Flags())
	addThreadsFlag(cmd.Flags())
	return cmd
}

// solveRun is one run of "c4book solve".
type solveRun struct {
	s             *solver.Solver
	weak, analyze bool
	nodes         bool         // print the nodes of each position on stderr
	oracle        *book.Oracle // the book s asks (--book), or nil
	out           *bufio.Writer
	stderr        io.Writer
}

// answer writes the line answering position p, written moves, and flushes
// it: the solver is far slower than a write, and a long run shows its
// results as they come. An exact solve stops when ctx ends
// (errInterrupted); -w and -a finish the position first.
func (r *solveRun) answer(ctx context.Context, moves []byte, p solver.Position) error {
	r.s.ResetNodes()
	if over := gameOver(&p); over != "" {
		fmt.Fprintf(r.stderr, "%s: %s\n", moves, over)
	}
	switch {
	case r.analyze:
		scores, ok := r.s.Analyze(p)
		r.out.Write(moves)
		for col, v := range scores {
			if !ok[col] {
				v = book.Unplayable
			}
			fmt.Fprintf(r.out, " %d", v)
		}
		r.out.WriteByte('\n')
	case r.weak:
		fmt.Fprintf(r.out, "%s %d\n", moves, r.s.SolveWeak(p))
	default:
		v, err := r.s.SolveContext(ctx, p) // a value only from a finished, confirmed search
		if err != nil {
			return interruptedOr(ctx, err)
		}
		fmt.Fprintf(r.out, "%s %d\n", moves, v)
	}
	if err := r.oracle.Err(); err != nil {
		return err
	}
	if r.nodes {
		fmt.Fprintf(r.stderr, "%s: %d nodes\n", moves, r.s.Nodes())
	}
	return r.out.Flush()
}

// gameOver says why the game of p is over, or returns "". The score of
// such a position is still printed: that of the game lost, or drawn.
func gameOver(p *solver.Position) string {
	switch {
	case !p.Over():
		return ""
	case p.LastMoveWon():
		return "the game is over: the last move made four"
	}
	return "the game is over: the board is full"
}
