package main

import (
	"fmt"

	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/solver"
)

// newSolver returns a solver for the configured board and table size.
func newSolver(cfg config.Config) (*solver.Solver, error) {
	b, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
	if err != nil {
		return nil, fmt.Errorf("board.width, board.height: %w", err)
	}
	s, err := solver.New(b, int64(cfg.Solver.TTSize))
	if err != nil {
		return nil, fmt.Errorf("solver.tt-size: %w", err)
	}
	return s, nil
}
