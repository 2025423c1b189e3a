package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
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
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), bookReadOnly)
			if err != nil {
				return err
			}
			r := &bookGetRun{bk: bk, board: bk.Board(), analyze: analyze,
				out: bufio.NewWriterSize(a.stdout, 64<<10), stderr: a.stderr}
			if err := r.open(cfg, solve); err != nil {
				return closeBook(bk, errors.Join(err, r.close()))
			}
			if len(args) > 0 {
				err = r.getArgs(cmd.Context(), args)
			} else {
				if isTerminal(a.stdin) {
					fmt.Fprintln(a.stderr, "Reading positions from standard input, one a line; end with Ctrl-D.")
				}
				err = r.getLines(cmd.Context(), a.stdin)
			}
			if cerr := r.close(); err == nil {
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
	bk      *book.Book
	reader  *book.Reader // the lookups of positions
	board   *solver.Board
	analyze bool
	s       *solver.Solver // solves what the book lacks (--solve), or nil
	oracle  *book.Oracle   // the book as s's oracle, or nil
	out     *bufio.Writer
	stderr  io.Writer
	bad     int                  // inputs that are not positions
	scores  [solver.MaxWidth]int // scratch of -a --solve
}

// open makes the reader of the run, and its solver if solve is set.
func (r *bookGetRun) open(cfg config.Config, solve bool) error {
	var err error
	if r.reader, err = r.bk.NewReader(); err != nil {
		return err
	}
	if solve {
		r.s, r.oracle, err = newBookSolver(r.bk, cfg)
	}
	return err
}

// close releases what open made.
func (r *bookGetRun) close() error {
	err := r.oracle.Close()
	if r.reader != nil {
		err = errors.Join(err, r.reader.Close())
	}
	return err
}

// unknownScore is printed for a position the book does not hold.
const unknownScore = '?'

// getArgs answers each argument.
func (r *bookGetRun) getArgs(ctx context.Context, args []string) error {
	for i, moves := range args {
		if ctx.Err() != nil {
			return errInterrupted
		}
		moves = strings.TrimSpace(moves) // as lines are
		p, err := r.board.Parse(moves)
		if err != nil {
			r.bad++
			fmt.Fprintf(r.stderr, "argument %d: %v\n", i+1, err)
			continue
		}
		if err := r.answer(ctx, []byte(solver.FormatMoves(moves)), p); err != nil {
			return err
		}
	}
	if err := r.out.Flush(); err != nil {
		return err
	}
	return r.result(len(args), "arguments")
}

// getLines answers each line of in. Lines are scanned in place, and the
// moves of a good line are played without a conversion to a string: a
// line costs a book lookup and a few hundred nanoseconds more.
func (r *bookGetRun) getLines(ctx context.Context, in io.Reader) error {
	cr := newCtxReader(ctx, in)
	defer cr.Close()
	n := 0
	var answerErr error
	err := book.ScanLines(cr, func(l book.Line) bool {
		if l.Ignorable() {
			return true
		}
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			answerErr = errInterrupted
			return false
		}
		line := bytes.TrimSpace(l.Text)
		moves, p, ok := fastPositionLine(r.board, line)
		if !ok || l.TooLong {
			// The slow path says what is wrong (or, should the fast one
			// have refused a good line, answers it).
			pl, err := book.ParsePositionLine(r.board, l)
			if err != nil {
				r.bad++
				fmt.Fprintf(r.stderr, "line %d: %v\n", l.Num, err)
				return true
			}
			moves, p = []byte(pl.Moves), pl.Pos
		}
		answerErr = r.answer(ctx, moves, p)
		return answerErr == nil
	})
	switch {
	case answerErr != nil:
		return answerErr
	case errors.Is(err, errInterrupted):
		return errInterrupted
	case err != nil:
		return err
	}
	if err := r.out.Flush(); err != nil {
		return err
	}
	return r.result(n, "lines")
}

// fastPositionLine parses a trimmed, non-blank line "moves" or "moves
// score" without allocating. It returns false for anything else, and for
// a move string that cannot be played: book.ParsePositionLine then says why.
func fastPositionLine(b *solver.Board, line []byte) (moves []byte, p solver.Position, ok bool) {
	moves = line
	if i := bytes.IndexAny(line, " \t"); i >= 0 {
		moves = line[:i]
		if rest := bytes.TrimSpace(line[i:]); bytes.IndexAny(rest, " \t") >= 0 {
			return nil, p, false
		}
	}
	p, err := b.ParseBytes(moves)
	return moves, p, err == nil
}

// answer writes the line answering position p, written moves. Lines are
// flushed when the buffer fills, and after a position the solver had to
// solve.
func (r *bookGetRun) answer(ctx context.Context, moves []byte, p solver.Position) error {
	r.out.Write(moves)
	solved := false
	var err error
	if r.analyze {
		solved, err = r.writeColumns(p)
	} else {
		solved, err = r.writeScore(ctx, p)
	}
	if err != nil {
		return err
	}
	r.out.WriteByte('\n')
	if solved {
		return r.out.Flush()
	}
	return nil
}

// writeScore writes " score" for p, " ?" if the book does not hold it and
// there is no solver. It reports whether it used the solver.
func (r *bookGetRun) writeScore(ctx context.Context, p solver.Position) (solved bool, err error) {
	v, ok, err := r.reader.GetEntry(p.Moves(), p.CanonicalKey())
	if err != nil {
		return false, err
	}
	if !ok && r.s != nil {
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve).
		if v.Score, err = r.s.SolveContext(ctx, p); err != nil {
			return true, interruptedOr(ctx, err)
		}
		if err := r.oracle.Err(); err != nil {
			return true, err
		}
		ok, solved = true, true
	}
	r.out.WriteByte(' ')
	if !ok {
		r.out.WriteByte(unknownScore)
		return false, nil
	}
	r.out.Write(strconv.AppendInt(r.out.AvailableBuffer(), int64(v.Score), 10))
	return solved, nil
}

// writeColumns writes " s1 ... sW" for p: -1000 for a column that cannot
// be played (every column once the game is over), "?" for one whose child
// the book does not hold, unless r has a solver: then book.MoveScores
// solves them. It reports whether it used the solver.
func (r *bookGetRun) writeColumns(p solver.Position) (solved bool, err error) {
	over := (p.Moves() > 0 && p.LastMoveWon()) || p.IsFull()
	if r.s != nil && !over {
		if solved, err = r.solveColumns(p); err != nil {
			return solved, err
		}
		for col := range r.board.Width() {
			r.writeInt(r.scores[col])
		}
		return solved, nil
	}
	for col := range r.board.Width() {
		if over || !p.CanPlay(col) {
			r.writeInt(unplayable)
			continue
		}
		m, ok, err := r.reader.MoveScore(p, col)
		switch {
		case err != nil:
			return false, err
		case ok:
			r.writeInt(m.Score)
		default:
			r.out.WriteByte(' ')
			r.out.WriteByte(unknownScore)
		}
	}
	return false, nil
}

// solveColumns fills r.scores with the score of each column of p, a
// position whose game is not over, with book.MoveScores: from the book,
// the rules or the solver. It reports whether it used the solver.
func (r *bookGetRun) solveColumns(p solver.Position) (solved bool, err error) {
	moves, err := r.bk.MoveScores(p, r.s)
	if err != nil {
		return false, err
	}
	if err := r.oracle.Err(); err != nil {
		return true, err
	}
	for col := range r.board.Width() {
		r.scores[col] = unplayable
	}
	for _, m := range moves {
		r.scores[m.Col] = m.Score
		solved = solved || m.From == book.FromSolver
	}
	return solved, nil
}

// writeInt writes " v".
func (r *bookGetRun) writeInt(v int) {
	r.out.WriteByte(' ')
	r.out.Write(strconv.AppendInt(r.out.AvailableBuffer(), int64(v), 10))
}

// result is the error of a run over n inputs (of what), or nil if all
// were positions.
func (r *bookGetRun) result(n int, what string) error {
	if r.bad > 0 {
		return fmt.Errorf("%d of %d %s are not positions (see the messages above)", r.bad, n, what)
	}
	return nil
}
