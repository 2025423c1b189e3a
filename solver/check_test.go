package solver

import (
	"context"
	"errors"
	"testing"
)

// TestSolver_confirm: every value but the score is contradicted when
// confirmed, with the table the solve left (as runSolve confirms) or an
// empty one, and the score is confirmed; a run whose value is contradicted
// gives ErrInconsistent and no value.
func TestSolver_confirm(t *testing.T) {
	s, _ := New(Standard, 4<<20)
	for _, c := range signaturePositions[4:9] {
		p, _ := Standard.Parse(c.moves)
		lo, hi := Standard.ScoreRange(p.Moves())
		for _, cold := range []bool{false, true} {
			for w := lo; w <= hi; w++ {
				v, err := s.runSolve(context.Background(), func() int {
					s.solve(p)
					if cold {
						s.Table().Clear()
					}
					return s.confirmed(&p, w)
				})
				switch {
				case w == c.score && (err != nil || v != w):
					t.Errorf("%s (cold %v): the score %d confirmed as %d, %v", c.moves, cold, w, v, err)
				case w != c.score && !errors.Is(err, ErrInconsistent):
					t.Errorf("%s (cold %v): %d for a score of %d confirmed: %d, %v", c.moves, cold, w, c.score, v, err)
				}
			}
		}
	}
	// An outcome, as SolveWeak confirms it.
	c := signaturePositions[5] // score -1
	p, _ := Standard.Parse(c.moves)
	lo, hi := Standard.ScoreRange(p.Moves())
	for _, claim := range [][2]int{{1, hi}, {0, 0}} {
		if _, err := s.runSolve(context.Background(), func() int { return s.confirm(&p, 0, claim[0], claim[1]) }); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: a score in [%d, %d] confirmed: %v", c.moves, claim[0], claim[1], err)
		}
	}
	if _, err := s.runSolve(context.Background(), func() int { return s.confirm(&p, -1, lo, -1) }); err != nil {
		t.Errorf("%s: a loss not confirmed: %v", c.moves, err)
	}
}

// TestSolver_finished: the solves that return no error (Solve, SolveNear,
// SolveWeak, Analyze) panic rather than give the value of a run that
// failed.
func TestSolver_finished(t *testing.T) {
	s, _ := New(Standard, 1<<20)
	for _, err := range []error{ErrInconsistent, ErrStopped} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("finished(0, %v) returned", err)
				}
			}()
			s.finished(0, err)
		}()
	}
	if v := s.finished(3, nil); v != 3 {
		t.Errorf("finished(3, nil) = %d", v)
	}
}
