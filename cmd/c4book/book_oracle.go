package main

import (
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/solver"
)

// bookOracle answers the solver's questions from a book: the exact score
// of a position the book holds. The solver asks it only about positions
// with at most maxMoves stones (see useBook), so a search pays a lookup
// (a seek of one kept iterator, about two microseconds) at its shallow
// nodes only, where a hit saves a whole subtree.
type bookOracle struct {
	bk       *book.Book
	r        *book.Reader
	maxMoves int   // the deepest depth the book holds
	asked    int64 // lookups made
	found    int64 // lookups that found the position
	err      error // the first lookup error
}

var _ solver.Oracle = (*bookOracle)(nil)

// Score returns the book's score of p and true, or false if the book does
// not hold p. A lookup error is kept (see Err) and answered as "not held":
// the search stays correct, only slower.
func (o *bookOracle) Score(p *solver.Position) (int, bool) {
	o.asked++
	v, ok, err := o.r.GetEntry(p.Moves(), p.CanonicalKey())
	if err != nil {
		if o.err == nil {
			o.err = fmt.Errorf("book %s: %w", o.bk.Path(), err)
		}
		return 0, false
	}
	if ok {
		o.found++
	}
	return v.Score, ok
}

// Err returns the first lookup error, or nil. A nil *bookOracle has none.
func (o *bookOracle) Err() error {
	if o == nil {
		return nil
	}
	return o.err
}

// Close releases the oracle's reader; close it before the book. A nil
// *bookOracle has nothing to close.
func (o *bookOracle) Close() error {
	if o == nil {
		return nil
	}
	return o.r.Close()
}

// useBook makes s ask bk for the score of every position with at most as
// many stones as the deepest position of bk, and returns the oracle. The
// book must be of s's board.
func useBook(s *solver.Solver, bk *book.Book) (*bookOracle, error) {
	if b := bk.Board(); !b.Equal(s.Board()) {
		return nil, boardMismatchError(bk.Path(), b, s.Board())
	}
	_, hi, ok, err := bk.DepthRange()
	if err != nil {
		return nil, fmt.Errorf("book %s: %w", bk.Path(), err)
	}
	r, err := bk.NewReader()
	if err != nil {
		return nil, fmt.Errorf("book %s: %w", bk.Path(), err)
	}
	o := &bookOracle{bk: bk, r: r, maxMoves: -1}
	if ok {
		o.maxMoves = hi
		s.SetOracle(o, hi)
	}
	return o, nil
}

// newBookSolver returns a solver of bk's board with the configured table
// size, using bk as its oracle.
func newBookSolver(bk *book.Book, cfg config.Config) (*solver.Solver, *bookOracle, error) {
	s, err := solver.New(bk.Board(), int64(cfg.Solver.TTSize))
	if err != nil {
		return nil, nil, fmt.Errorf("solver.tt-size: %w", err)
	}
	o, err := useBook(s, bk)
	if err != nil {
		return nil, nil, err
	}
	return s, o, nil
}
