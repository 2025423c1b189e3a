package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Answer is what the API says about one position: the JSON object of
// GET /v1/position and of each element of POST /v1/positions.
type Answer struct {
	Moves  string `json:"moves"`   // the moves played, "" for the empty board
	Stones int    `json:"stones"`  // stones on the board
	ToMove int    `json:"to_move"` // the player to move: 1 (who started) or 2
	// Over says why the game is over ("the last move made four", "the
	// board is full"), empty while it goes on.
	Over string `json:"over,omitempty"`
	// Score is the exact score for the player to move (Pons' convention:
	// positive wins, larger sooner; see docs/cli.md).
	Score   int    `json:"score"`
	Outcome string `json:"outcome"` // "win", "draw" or "loss", for the player to move
	// PliesToEnd is how many moves the game lasts with perfect play.
	PliesToEnd int `json:"plies_to_end"`
	// Columns holds one element per column, left to right: the score of
	// playing it, or null where it cannot be played.
	Columns []*Column `json:"columns"`
	Best    []int     `json:"best"`   // the best columns, 1-based
	Source  string    `json:"source"` // where Score came from: "book", "solver" or "rule"
	// BookDepth is the most stones of the book's positions.
	BookDepth int `json:"book_depth"`
}

// Column is the score of playing one column, for the player who plays it.
type Column struct {
	Score      int    `json:"score"`
	Outcome    string `json:"outcome"`      // "win", "draw" or "loss"
	PliesToEnd int    `json:"plies_to_end"` // counted from before the move
	Source     string `json:"source"`       // "book", "solver" or "rule"
}

// errBeyondBook is the error of a position the book does not hold when
// serving is not allowed to solve (serve.solve-timeout 0).
var errBeyondBook = errors.New("the position is beyond the book, and this server does not solve (serve.solve-timeout is 0)")

// outcome names the outcome of a score.
func outcome(score int) string {
	switch solver.Outcome(score) {
	case 1:
		return "win"
	case -1:
		return "loss"
	}
	return "draw"
}

// gameOver says why the game of p is over, or returns "".
func gameOver(p *solver.Position) string {
	switch {
	case !p.Over():
		return ""
	case p.LastMoveWon():
		return "the last move made four"
	}
	return "the board is full"
}

// answer works out the Answer for p, written moves, from src and, for what
// the book does not hold, from a solver of the pool. ctx bounds the
// solving: past it, the error wraps errTimeout.
func (s *Server) answer(ctx context.Context, src *source, moves string, p solver.Position) (*Answer, error) {
	b := p.Board()
	a := &Answer{Moves: moves, Stones: p.Moves(), ToMove: 1 + p.Moves()%2, BookDepth: src.depth,
		Columns: make([]*Column, b.Width()), Best: []int{}}
	if over := gameOver(&p); over != "" {
		a.Over, a.Source = over, "rule"
		a.Score, _ = p.RuleScore()
		a.Outcome, a.PliesToEnd = outcome(a.Score), 0
		return a, nil
	}

	// The position's own score, if the book holds it.
	l, done, err := src.lookup()
	if err != nil {
		return nil, err
	}
	defer done()
	v, own, err := l.GetEntry(p.Moves(), p.CanonicalKey())
	if err != nil {
		return nil, err
	}
	if own {
		a.Score, a.Source = v.Score, "book"
	}

	// The columns: from the rules or the book, then what is left from the
	// solver.
	var missing []int
	for col := range p.Children() {
		m, found, err := l.MoveScore(p, col)
		if err != nil {
			return nil, err
		}
		if !found {
			missing = append(missing, col)
			continue
		}
		a.Columns[col] = &Column{Score: m.Score, Source: m.From.String()}
	}
	if len(missing) > 0 {
		least := solver.MinScore // what the solver is told of each child's score
		if own {
			least = -a.Score // a child scores at least minus its parent
		}
		if err := s.solveColumns(ctx, src, p, missing, least, a); err != nil {
			return nil, err
		}
	}

	best := solver.MinScore - 1
	for col, c := range a.Columns {
		if c == nil {
			continue
		}
		c.Outcome, c.PliesToEnd = outcome(c.Score), b.PliesToEnd(p.Moves(), c.Score)
		switch {
		case c.Score > best:
			best, a.Best = c.Score, append(a.Best[:0], col+1)
		case c.Score == best:
			a.Best = append(a.Best, col+1)
		}
	}
	switch {
	case !own:
		a.Score, a.Source = best, "solver"
		if len(missing) == 0 {
			a.Source = "book" // every child is in the book
		}
	case best != a.Score:
		return nil, fmt.Errorf("%w: the book scores %q %d, its best column %d", book.ErrCorrupt, moves, a.Score, best)
	}
	a.Outcome, a.PliesToEnd = outcome(a.Score), b.PliesToEnd(p.Moves(), a.Score)
	return a, nil
}

// solveColumns fills the columns cols of a, whose children the book does
// not hold, with a solver of the pool, each child's score being at least
// least. A child found below it means that the book's score of p, which
// gave least, is wrong: book.ErrCorrupt.
func (s *Server) solveColumns(ctx context.Context, src *source, p solver.Position, cols []int, least int, a *Answer) error {
	if s.opts.SolveTimeout <= 0 {
		return errBeyondBook
	}
	sv, err := s.solvers.get(ctx, src)
	if err != nil {
		return err
	}
	defer s.solvers.put(sv)
	guess := 0
	for _, col := range cols {
		child := p
		child.Play(col)
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve); the answer, and the cache, get
		// nothing of a solve that failed.
		v, err := sv.s.SolveAtLeastContext(ctx, child, least, guess)
		if err != nil {
			if errors.Is(err, solver.ErrBelowBound) {
				return fmt.Errorf("%w: the book scores %q %d, but its column %d scores more (%w)", book.ErrCorrupt, a.Moves, a.Score, col+1, err)
			}
			if ctx.Err() == nil {
				return err // not a timeout: a fault of the solver
			}
			return fmt.Errorf("%w: %w", errTimeout, err)
		}
		if err := sv.o.Err(); err != nil {
			return err
		}
		guess = solver.Outcome(v) // as workers do: see worker.solve
		a.Columns[col] = &Column{Score: -v, Source: "solver"}
		s.metrics.solved.Add(1)
	}
	return nil
}
