package solver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// startHelpers starts n helpers of s, each on s's table, and returns a
// function that stops them and waits for them.
func startHelpers(tb testing.TB, s *Solver, n int) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Help(ctx, NewShared(s.Table())); err != nil && !errors.Is(err, context.Canceled) {
				tb.Errorf("Help: %v", err)
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// waitHelpers returns once n helpers take part in s's open team; it fails
// tb if that takes a minute.
func waitHelpers(tb testing.TB, s *Solver, n int32) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for s.team.Load().helpers.Load() < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d helpers of %d joined the team in a minute", s.team.Load().helpers.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSolver_Help: a solver helped by others on its table gives the right
// scores, cold and warm, and counts the helpers' nodes (run with -race to
// check the team's state).
func TestSolver_Help(t *testing.T) {
	s, err := New(Standard, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	s.OpenTeam()
	defer s.CloseTeam()
	stop := startHelpers(t, s, 2)
	defer stop()
	waitHelpers(t, s, 2)
	for _, warm := range []bool{false, true} {
		for _, c := range signaturePositions {
			p, _ := Standard.Parse(c.moves)
			if !warm {
				s.Table().Clear()
			}
			if got := s.Solve(p); got != c.score {
				t.Errorf("warm %v: Solve(%s) = %d, want %d", warm, c.moves, got, c.score)
			}
		}
	}
	if s.helperNodes.Load() == 0 {
		t.Error("the helpers searched no node")
	}
	if s.Nodes() <= s.nodes {
		t.Errorf("Nodes() = %d, not more than the solver's own %d", s.Nodes(), s.nodes)
	}
}

// TestSolver_Help_leaving: Help returns when the team closes or its
// context is done, and refuses a helper on another table. The team closes
// and the context is done only once the helper has joined the team: a
// Help that has not joined yet returns at once for another reason (no
// team open), or for the same (its context done) without having waited.
func TestSolver_Help_leaving(t *testing.T) {
	s, _ := New(Standard, 1<<20)
	other, _ := New(Standard, 1<<20)
	if err := s.Help(context.Background(), other); !errors.Is(err, ErrNotSameTable) {
		t.Errorf("Help with another table: %v, want ErrNotSameTable", err)
	}
	if err := s.Help(context.Background(), NewShared(s.Table())); err != nil {
		t.Errorf("Help of a solver with no team: %v", err)
	}
	s.OpenTeam()
	done := make(chan error)
	go func() { done <- s.Help(context.Background(), NewShared(s.Table())) }()
	waitHelpers(t, s, 1)
	s.CloseTeam()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Help after CloseTeam: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Help did not return after CloseTeam")
	}

	s.OpenTeam()
	defer s.CloseTeam()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- s.Help(ctx, NewShared(s.Table())) }()
	waitHelpers(t, s, 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Help after its context is done: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Help did not return when its context was done")
	}
}

// TestSolver_Help_stop: stopping a helped search stops its helpers too, and
// the solver's next search works.
func TestSolver_Help_stop(t *testing.T) {
	s, _ := New(Standard, 8<<20)
	s.OpenTeam()
	defer s.CloseTeam()
	stop := startHelpers(t, s, 1)
	defer stop()
	waitHelpers(t, s, 1)
	p, _ := Standard.Parse("")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.SolveContext(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SolveContext of the empty board in 50 ms: %v", err)
	}
	c := signaturePositions[4]
	p, _ = Standard.Parse(c.moves)
	if got := s.Solve(p); got != c.score {
		t.Errorf("Solve(%s) after a stopped search = %d, want %d", c.moves, got, c.score)
	}
}
