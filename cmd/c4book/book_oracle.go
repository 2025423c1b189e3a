package main

import (
	"errors"

	"github.com/c4book/c4book/book"
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
