package main

import (
	"errors"
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/solver"
)

// useBook makes s ask bk for the score of every position with at most as
// many stones as the deepest position of bk, and returns the oracle. The
// book must be of s's board.
func useBook(s *solver.Solver, bk *book.Book) (*book.Oracle, error) {
	if b := bk.Board(); !b.Equal(s.Board()) {
		return nil, boardMismatchError(bk.Path(), b, s.Board())
	}
	o, err := bk.NewOracle()
	if err != nil {
		return nil, err
	}
	if err := o.Attach(s); err != nil {
		return nil, errors.Join(err, o.Close())
	}
	return o, nil
}

// newBookSolver returns a solver of bk's board with the configured table
// size, using bk as its oracle.
func newBookSolver(bk *book.Book, cfg config.Config) (*solver.Solver, *book.Oracle, error) {
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
