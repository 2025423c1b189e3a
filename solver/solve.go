package solver

import (
	"context"
	"errors"
	"fmt"
)

// Solve returns the exact score of p (see score.go). p must be on the
// solver's board. A position whose last move made four scores as lost; a
// full board as a draw.
func (s *Solver) Solve(p Position) int {
	return s.finished(s.runSolve(context.Background(), func() int { return s.solve(p) }))
}

// solve is Solve within a run.
func (s *Solver) solve(p Position) int {
	if v, ok := p.RuleScore(); ok {
		return v
	}
	if v, ok := s.askOracle(&p); ok {
		return v // the oracle's word is trusted: asking again asks it
	}
	lo, hi := s.board.ScoreRange(p.moves)
	return s.confirmed(&p, s.solveWindow(p, lo, hi, lo/2, hi/2, 0))
}

// setKey sets n's table key and bucket, those of its position. The key
// is the position's (Position.Key), or with mirrorTable set the smaller of
// it and its mirror image's; n.mirrored says which.
func (s *Solver) setKey(n *line) {
	n.key, n.mirrored = n.current+n.mask, false
	if s.mirrorTable {
		n.key, n.mirrored = s.board.canonicalKey(n.key)
	}
	n.bucket = s.table.bucket(n.key)
	n.keyed = true
}

// SolveNear is Solve for a position whose score is likely guess: it first
// asks whether the score is at least guess, then steps from the answer
// (see solveWindow); if guess is the score, it is found by two searches.
// A guess far from the score costs more than a right one saves: of a
// neighbour just solved, pass its Outcome (1, 0 or -1), not its score
// (docs/solver.md measures both).
func (s *Solver) SolveNear(p Position, guess int) int {
	return s.finished(s.runSolve(context.Background(), func() int { return s.solveNear(p, guess) }))
}

// solveNear is SolveNear within a run.
func (s *Solver) solveNear(p Position, guess int) int { return s.solveAtLeast(p, MinScore, guess) }

// ErrBelowBound is returned by SolveAtLeastContext for a position whose
// score is below the bound it was given: the bound was wrong.
var ErrBelowBound = errors.New("solver: the score is below the bound it was said to be at least")

// SolveAtLeastContext is SolveNearContext for a position whose score is
// known to be at least least, as a child's score is at least minus its
// parent's: a book's score of a position bounds its children's. No search
// asks about a score below least, which saves the searches that would
// find the bound again (docs/solver.md measures it). The value is
// confirmed in full, the bound included: a bound that is wrong, such as
// one from a book that lies, gives ErrBelowBound, never a value.
func (s *Solver) SolveAtLeastContext(ctx context.Context, p Position, least, guess int) (int, error) {
	return s.runSolve(ctx, func() int { return s.solveAtLeast(p, least, guess) })
}

// solveAtLeast is SolveAtLeastContext within a run; solveNear is it with
// no bound.
func (s *Solver) solveAtLeast(p Position, least, guess int) int {
	v, ok := p.RuleScore()
	if !ok {
		v, ok = s.askOracle(&p) // the oracle's word is trusted: asking again asks it
	}
	if ok {
		if v < least {
			s.fault = s.belowBound(&p, v, least)
		}
		return v
	}
	lo, hi := s.board.ScoreRange(p.moves)
	if least > hi {
		s.fault = s.belowBound(&p, hi, least)
		return hi
	}
	least = max(lo, least)
	guess = max(least, min(hi, guess))
	v = s.solveWindow(p, least, hi, guess-1)
	// A value equal to the bound is one no search proved to be at least
	// it (a search that failed high would have raised the bound): ask now,
	// so that a wrong bound is told from a fault of the solver.
	if v == least && least > lo {
		if r := s.search(p, least-1, least); !s.stopped && r < least {
			s.fault = s.belowBound(&p, r, least)
			return v
		}
	}
	return s.confirmed(&p, v)
}

// belowBound returns the error of a position p found to score at most
// most, below the bound least it was given.
func (s *Solver) belowBound(p *Position, most, least int) error {
	moves, _ := p.MoveString()
	return fmt.Errorf("%w: %q scores at most %d, not at least %d", ErrBelowBound, moves, most, least)
}

// ErrStopped is returned by SolveContext and SolveNearContext for a search
// that was stopped although its context does not say it is done.
var ErrStopped = errors.New("solver: search stopped")

// SolveContext is Solve that gives up when ctx is done, returning ctx's
// error. A search stopped this way leaves the table as valid as before:
// only finished searches store their results. It returns a value only for
// a search that finished and whose value was confirmed (check.go); else
// an error: ctx's, ErrStopped, or ErrInconsistent.
func (s *Solver) SolveContext(ctx context.Context, p Position) (int, error) {
	return s.runSolve(ctx, func() int { return s.solve(p) })
}

// SolveNearContext is SolveNear that gives up when ctx is done, as
// SolveContext does.
func (s *Solver) SolveNearContext(ctx context.Context, p Position, guess int) (int, error) {
	return s.runSolve(ctx, func() int { return s.solveNear(p, guess) })
}

// stopAfter is context.AfterFunc; tests make it run the stop late.
var stopAfter = context.AfterFunc

// beginRun starts a new run of the solver, a solve or a Help, and returns
// its number, for its stop requests. A solver that helped others before
// searches its own positions without their noise.
func (s *Solver) beginRun() uint64 {
	s.run++
	s.stopped, s.fault = false, nil
	s.job = nil
	s.jitterUntil = 0
	return s.run
}

// requestStop asks run n to stop. Safe for concurrent use. A request for
// a run that has ended stops nothing: the runs after it have higher
// numbers, and a request never lowers stopAt.
func (s *Solver) requestStop(n uint64) {
	for {
		at := s.stopAt.Load()
		if at >= n || s.stopAt.CompareAndSwap(at, n) {
			return
		}
	}
}

// stopRequested reports whether the current run was asked to stop.
func (s *Solver) stopRequested() bool { return s.stopAt.Load() == s.run }

// runSolve runs solve as a new run, stopped when ctx is done. It returns
// solve's value only if its search finished and was confirmed: a search
// that stopped is void, and runSolve returns an error, ctx's or else
// ErrStopped, whatever value solve returned; a value its confirmation
// contradicts is ErrInconsistent (see check.go). This is the one place a
// search's value leaves the solver, and where both are kept.
func (s *Solver) runSolve(ctx context.Context, solve func() int) (int, error) {
	n := s.beginRun()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if ctx.Done() != nil {
		release := stopAfter(ctx, func() { s.requestStop(n) })
		defer release()
	}
	v := solve()
	if s.stopped {
		s.stopped = false
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return 0, ErrStopped
	}
	if err := s.fault; err != nil {
		s.fault = nil
		return 0, err
	}
	return v, nil
}

// finished returns the value of a run that cannot be stopped (no context
// ends it). A stop there, or a value not confirmed, is a bug of the
// solver's: it panics rather than give a value that could be wrong.
func (s *Solver) finished(v int, err error) int {
	if err != nil {
		panic(fmt.Sprintf("solver: a search that could not be stopped failed: %v", err))
	}
	return v
}

// SolveWeak returns 1 if the player to move wins p, 0 for a draw and -1 for
// a loss. It is faster than Solve: it only tells the outcome.
func (s *Solver) SolveWeak(p Position) int {
	return s.finished(s.runSolve(context.Background(), func() int {
		if v, ok := p.RuleScore(); ok {
			return Outcome(v)
		}
		if v, ok := s.askOracle(&p); ok {
			return Outcome(v)
		}
		o := Outcome(s.solveWindow(p, -1, 1))
		lo, hi := s.board.ScoreRange(p.moves)
		switch o {
		case 1:
			lo = 1
		case -1:
			hi = -1
		default:
			lo, hi = 0, 0
		}
		return s.confirm(&p, o, lo, hi)
	}))
}

// Analyze returns the score of each column of p: the score of p if that
// column is played, and ok false for a column that cannot be played (a
// full column, or any column once the game is over).
func (s *Solver) Analyze(p Position) (scores []int, ok []bool) {
	scores = make([]int, s.board.width)
	ok = make([]bool, s.board.width)
	if p.moves > 0 && p.LastMoveWon() {
		return scores, ok
	}
	for col, child := range p.Children() {
		ok[col] = true
		if v, ruled := p.RuleMoveScore(col); ruled {
			scores[col] = v
			continue
		}
		scores[col] = -s.Solve(child)
	}
	return scores, ok
}

// solveWindow finds the score of p, known to lie in [lo, hi], by null-window
// searches that narrow the interval. Each asks whether the score is above
// a value med. The first values asked are probes, those inside the
// interval; then the search steps from the last answer: it fails soft, so
// an answer "at least r" or "at most r" is often the score itself, and the
// next search asks whether the score is above r, or at least r.
//
// What a search costs depends on med more than on the score: a search near
// 0 of a position won quickly must prove some win, slow ones included, and
// costs far more than one asking for the quick win (10 to 100 times on
// Pons' Test_L1_R1). Solve therefore first asks about half the lowest and
// half the highest score, which is cheap, and steps from 0 only when the
// score lies between them.
//
// Precondition: p is not over and its player to move cannot make four at
// once.
func (s *Solver) solveWindow(p Position, lo, hi int, probes ...int) int {
	s.mirrorTable = p.Key() == p.MirrorKey()
	searched, failedHigh := false, false
	for lo < hi {
		var med int
		switch {
		case len(probes) > 0:
			med, probes = probes[0], probes[1:]
			if med < lo || med >= hi {
				continue
			}
		case !searched:
			med = max(lo, min(hi-1, 0))
		case failedHigh:
			med = lo // is the score above the lower bound?
		default:
			med = hi - 1 // is the score the upper bound?
		}
		r := s.searchTeam(p, med, med+1)
		if s.stopped {
			return 0 // void: runSolve says so
		}
		searched, failedHigh = true, r > med
		if failedHigh {
			lo = r
		} else {
			hi = r
		}
	}
	return lo
}
