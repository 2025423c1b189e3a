package book

import (
	"bufio"
	"context"
	"errors"
	"strconv"

	"github.com/c4book/c4book/solver"
)

// Answers are what c4book book get writes: for each position a line
// "moves score", or "moves ?" when the book does not hold it; with
// columns, "moves s1 ... sW", the score of each column seen by the player
// to move (as c4book solve -a writes it), Unplayable for a column that
// cannot be played and "?" for one whose child the book does not hold. A
// column that makes four, or fills the board, needs no book. With a
// solver, what the book does not hold is solved, and no "?" is written.

// Unplayable is the score written for a column that cannot be played, as
// Pons' solver writes it.
const Unplayable = -1000

// unknownScore is written for a score the book does not hold.
const unknownScore = '?'

// AnswerOptions says what an Answerer writes.
type AnswerOptions struct {
	// Columns writes the score of each column of a position instead of
	// the position's.
	Columns bool
	// Solver, if not nil, solves what the book does not hold, asking the
	// book about the positions it meets (see Oracle). It must be of the
	// book's board.
	Solver *solver.Solver
}

// Answerer writes the answers of positions from a book. It is for one
// goroutine; close it before the book.
type Answerer struct {
	bk      *Book
	reader  *Reader // the lookups of positions
	columns bool
	s       *solver.Solver // solves what the book lacks, or nil
	oracle  *Oracle        // the book as s's oracle, or nil
	scores  [solver.MaxWidth]int
}

// NewAnswerer returns an Answerer of the book's positions.
func (b *Book) NewAnswerer(opts AnswerOptions) (*Answerer, error) {
	r, err := b.NewReader()
	if err != nil {
		return nil, err
	}
	a := &Answerer{bk: b, reader: r, columns: opts.Columns, s: opts.Solver}
	if a.s == nil {
		return a, nil
	}
	if a.oracle, err = b.NewOracle(); err == nil {
		err = a.oracle.Attach(a.s)
	}
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return a, nil
}

// Close releases the answerer's reads of the book.
func (a *Answerer) Close() error {
	return errors.Join(a.oracle.Close(), a.reader.Close())
}

// Answer writes to w the line answering position p, written moves. It
// reports whether it used the solver. A solve stops when ctx ends, with
// the solver's error.
func (a *Answerer) Answer(ctx context.Context, w *bufio.Writer, moves []byte, p solver.Position) (solved bool, err error) {
	w.Write(moves)
	if a.columns {
		solved, err = a.writeColumns(w, p)
	} else {
		solved, err = a.writeScore(ctx, w, p)
	}
	if err != nil {
		return solved, err
	}
	return solved, w.WriteByte('\n')
}

// writeScore writes " score" for p, " ?" if the book does not hold it and
// there is no solver. It reports whether it used the solver.
func (a *Answerer) writeScore(ctx context.Context, w *bufio.Writer, p solver.Position) (solved bool, err error) {
	v, ok, err := a.reader.GetEntry(p.Moves(), p.CanonicalKey())
	if err != nil {
		return false, err
	}
	if !ok && a.s != nil {
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve).
		if v.Score, err = a.s.SolveContext(ctx, p); err != nil {
			return true, err
		}
		if err := a.oracle.Err(); err != nil {
			return true, err
		}
		ok, solved = true, true
	}
	w.WriteByte(' ')
	if !ok {
		w.WriteByte(unknownScore)
		return false, nil
	}
	w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(v.Score), 10))
	return solved, nil
}

// writeColumns writes " s1 ... sW" for p: Unplayable for a column that
// cannot be played (every column once the game is over), "?" for one
// whose child the book does not hold, unless there is a solver: then
// MoveScores solves them. It reports whether it used the solver.
func (a *Answerer) writeColumns(w *bufio.Writer, p solver.Position) (solved bool, err error) {
	width := a.bk.Board().Width()
	over := p.Over()
	if a.s != nil && !over {
		if solved, err = a.solveColumns(p); err != nil {
			return solved, err
		}
		for col := range width {
			writeInt(w, a.scores[col])
		}
		return solved, nil
	}
	for col := range width {
		if over || !p.CanPlay(col) {
			writeInt(w, Unplayable)
			continue
		}
		m, ok, err := a.reader.MoveScore(p, col)
		switch {
		case err != nil:
			return false, err
		case ok:
			writeInt(w, m.Score)
		default:
			w.WriteByte(' ')
			w.WriteByte(unknownScore)
		}
	}
	return false, nil
}

// solveColumns fills a.scores with the score of each column of p, a
// position whose game is not over, with MoveScores: from the book, the
// rules or the solver. It reports whether it used the solver.
func (a *Answerer) solveColumns(p solver.Position) (solved bool, err error) {
	moves, err := a.bk.MoveScores(p, a.s)
	if err != nil {
		return false, err
	}
	if err := a.oracle.Err(); err != nil {
		return true, err
	}
	for col := range a.bk.Board().Width() {
		a.scores[col] = Unplayable
	}
	for _, m := range moves {
		a.scores[m.Col] = m.Score
		solved = solved || m.From == FromSolver
	}
	return solved, nil
}

// writeInt writes " v".
func writeInt(w *bufio.Writer, v int) {
	w.WriteByte(' ')
	w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(v), 10))
}
