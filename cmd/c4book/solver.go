package main

import (
	"context"
	"fmt"
	"sync"

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

// startHelpers gives s threads-1 helpers, solvers on its table that search
// its positions with it (see solver.Solver.Help), until stop is called.
func startHelpers(s *solver.Solver, threads int) (stop func()) {
	if threads <= 1 {
		return func() {}
	}
	s.OpenTeam()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range threads - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Help(ctx, solver.NewShared(s.Table())) // same table: no error
		}()
	}
	return func() {
		cancel()
		s.CloseTeam()
		wg.Wait()
	}
}
