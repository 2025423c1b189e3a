package solver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// signaturePositions are a fixed sample of positions of Pons' reference
// sets, easy to hard, with their scores.
var signaturePositions = []struct {
	moves string
	score int
}{
	{"2252576253462244111563365343671351441", -1},
	{"7422341735647741166133573473242566", 1},
	{"5554224333234511764415115", 4},
	{"52753311433677442422121", 8},
	{"274552224131661", 0},
	{"5455174361263362", -1},
	{"2531276566711153", 2},
	{"6614446666373154", -4},
	{"32164625", 11},
	{"6146", 18},
	{"243335424257", 12},
	{"5512243243536", 13},
	{"32751571231557", -3},
	{"335662333565", -2},
	{"2416615552", 4},
}

// nodeSignature is the number of nodes the search takes on
// signaturePositions, each solved with a cleared table of signatureTable
// bytes. Any change to the search that changes it changes the search:
// update it on purpose, and quote it in the commit message ("Nodes: N").
const (
	nodeSignature  = 393728
	signatureTable = 16 << 20
)

func TestSolver_nodeSignature(t *testing.T) {
	// Where the CPU has AVX2, also without it: expand then finds the
	// threats with the Go loop, and must search the same nodes.
	defer func(saved bool) { haveAVX2 = saved }(haveAVX2)
	for _, avx2 := range []bool{false, true} {
		if avx2 && !haveAVX2 {
			continue
		}
		haveAVX2 = avx2
		s, err := New(Standard, signatureTable)
		if err != nil {
			t.Fatal(err)
		}
		var nodes uint64
		for _, c := range signaturePositions {
			p, err := Standard.Parse(c.moves)
			if err != nil {
				t.Fatal(err)
			}
			s.Table().Clear()
			s.ResetNodes()
			if got := s.Solve(p); got != c.score {
				t.Errorf("AVX2 %v: Solve(%s) = %d, want %d", avx2, c.moves, got, c.score)
			}
			nodes += s.Nodes()
		}
		if nodes != nodeSignature {
			t.Errorf("AVX2 %v: node signature %d, want %d: the search changed; if on purpose, update nodeSignature", avx2, nodes, nodeSignature)
		}
	}
}

// TestSolver_properties checks what holds of every position: a position and
// its mirror have the same score, Solve is the best of Analyze, SolveWeak
// is the sign of Solve, and a warm table gives the same scores as a cold
// one.
func TestSolver_properties(t *testing.T) {
	warm, _ := New(Standard, 8<<20)
	cold, _ := New(Standard, 8<<20)
	var positions []string
	for _, set := range []struct {
		name string
		n    int
	}{{"Test_L3_R1", 30}, {"Test_L2_R1", 30}, {"Test_L2_R2", 10}} {
		for _, c := range readRefSet(t, set.name, set.n) {
			positions = append(positions, c.moves)
		}
	}
	for _, moves := range positions {
		p, err := Standard.Parse(moves)
		if err != nil {
			t.Fatal(err)
		}
		cold.Table().Clear()
		score := cold.Solve(p)
		if m := warm.Solve(p.Mirror()); m != score {
			t.Errorf("%s: score %d, mirror %d", moves, score, m)
		}
		if w := warm.SolveWeak(p); w != Outcome(score) {
			t.Errorf("%s: SolveWeak %d, Solve %d", moves, w, score)
		}
		scores, ok := warm.Analyze(p)
		best := -1000
		for col := range scores {
			if ok[col] != p.CanPlay(col) {
				t.Errorf("%s: column %d playable %v, Analyze says %v", moves, col+1, p.CanPlay(col), ok[col])
			}
			if ok[col] {
				best = max(best, scores[col])
			}
		}
		if best != score {
			t.Errorf("%s: Solve %d, best of Analyze %d (%v)", moves, score, best, scores)
		}
	}
}

func TestSolver_terminalPositions(t *testing.T) {
	s, _ := New(Standard, MinTableBytes<<4)
	for _, tc := range []struct {
		moves string
		score int
	}{
		{"1212121", -18},  // lost: the opponent's 4th stone made four
		{"1122334", -18},  // same, horizontally
		{"121212", 18},    // wins with the next stone, its 4th
		{"12123252", -18}, // lost to the second player's 4th stone
	} {
		p, err := Standard.Parse(tc.moves)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Solve(p); got != tc.score {
			t.Errorf("Solve(%s) = %d, want %d", tc.moves, got, tc.score)
		}
	}
	// A full board is a draw.
	full, err := MustBoard(4, 4).Parse("1234123443214321")
	if err != nil {
		t.Fatal(err)
	}
	s4, _ := New(MustBoard(4, 4), MinTableBytes)
	if got := s4.Solve(full); !full.IsFull() || got != 0 {
		t.Errorf("full board: Solve = %d, IsFull %v", got, full.IsFull())
	}
}

// BenchmarkSolver_Solve solves the signature positions, each with a cleared
// table; the search must not allocate.
func BenchmarkSolver_Solve(b *testing.B) {
	s, err := New(Standard, signatureTable)
	if err != nil {
		b.Fatal(err)
	}
	var positions []Position
	for _, c := range signaturePositions {
		p, err := Standard.Parse(c.moves)
		if err != nil {
			b.Fatal(err)
		}
		positions = append(positions, p)
	}
	b.ReportAllocs()
	s.ResetNodes()
	for b.Loop() {
		for _, p := range positions {
			s.Table().Clear()
			s.Solve(p)
		}
	}
	b.ReportMetric(float64(s.Nodes())/b.Elapsed().Seconds(), "nodes/s")
}

// mapOracle knows the scores of the positions in it, by key.
type mapOracle struct {
	scores map[uint64]int
	asked  int
}

func (o *mapOracle) Score(p *Position) (int, bool) {
	o.asked++
	v, ok := o.scores[p.Key()]
	return v, ok
}

func TestSolver_SetOracle(t *testing.T) {
	b := MustBoard(5, 4)
	s, _ := New(b, 1<<20)
	// Exact scores of every position with 3 stones.
	o := &mapOracle{scores: map[uint64]int{}}
	for _, moves := range []string{"111", "123", "333", "345", "512", "221", "543", "132"} {
		p, _ := b.Parse(moves)
		o.scores[p.Key()] = s.Solve(p)
	}
	root, _ := b.Parse("33")
	want := s.Solve(root)

	fresh, _ := New(b, 1<<20)
	fresh.SetOracle(o, 3)
	fresh.ResetNodes()
	if got := fresh.Solve(root); got != want {
		t.Errorf("with oracle: Solve = %d, want %d", got, want)
	}
	if o.asked == 0 {
		t.Errorf("oracle never asked")
	}
	// The oracle's word is final: a planted score shows in the answer.
	p, _ := b.Parse("345")
	o.scores[p.Key()] = 7
	if got := fresh.Solve(p); got != 7 {
		t.Errorf("Solve of a position the oracle knows = %d, want its score 7", got)
	}
	fresh.SetOracle(nil, 0)
	fresh.Table().Clear()
	if got := fresh.Solve(p); got == 7 {
		t.Errorf("oracle still asked after SetOracle(nil)")
	}
}

func TestSolver_SolveContext(t *testing.T) {
	s, _ := New(Standard, 16<<20)
	// The empty board takes minutes: without the stop, this test would
	// run into the test binary's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.SolveContext(ctx, Standard.NewPosition()); err != context.DeadlineExceeded {
		t.Fatalf("SolveContext = %v, want %v", err, context.DeadlineExceeded)
	}
	// The table is still sound, and the solver usable.
	for _, c := range signaturePositions[:8] {
		p, _ := Standard.Parse(c.moves)
		v, err := s.SolveContext(context.Background(), p)
		if err != nil || v != c.score {
			t.Errorf("after a stop: SolveContext(%s) = %d, %v; want %d", c.moves, v, err, c.score)
		}
	}
}

// TestSolver_symmetricRoot: under a symmetric root, positions share table
// entries with their mirror images; scores must not change, also for
// positions solved afterwards with the same table.
func TestSolver_symmetricRoot(t *testing.T) {
	b := MustBoard(6, 4)
	s, _ := New(b, 4<<20)
	s.Solve(b.NewPosition())
	fresh, _ := New(b, 4<<20)
	for _, moves := range []string{"1", "2", "3", "34", "43", "6", "5", "61", "16", "3443"} {
		p, _ := b.Parse(moves)
		fresh.Table().Clear()
		if got, want := s.Solve(p), fresh.Solve(p); got != want {
			t.Errorf("%s: %d with the warm table, %d with a fresh one", moves, got, want)
		}
	}
}

func TestSolver_SolveNear(t *testing.T) {
	s, _ := New(Standard, 8<<20)
	for _, c := range signaturePositions[:10] {
		p, _ := Standard.Parse(c.moves)
		for _, guess := range []int{c.score, c.score - 1, c.score + 1, -30, 30, 0} {
			s.Table().Clear()
			if got := s.SolveNear(p, guess); got != c.score {
				t.Errorf("SolveNear(%s, %d) = %d, want %d", c.moves, guess, got, c.score)
			}
		}
	}
}

// TestSolver_SolveAtLeastContext: a true bound gives the score, with a
// cleared table or a warm one; a bound above the score gives
// ErrBelowBound, never a value, also where the rules or the oracle give
// the score.
func TestSolver_SolveAtLeastContext(t *testing.T) {
	ctx := context.Background()
	s, _ := New(Standard, 8<<20)
	for _, c := range signaturePositions[:10] {
		p, _ := Standard.Parse(c.moves)
		for _, least := range []int{MinScore, c.score - 3, c.score - 1, c.score} {
			for _, clear := range []bool{true, false} {
				if clear {
					s.Table().Clear()
				}
				if got, err := s.SolveAtLeastContext(ctx, p, least, 0); err != nil || got != c.score {
					t.Errorf("SolveAtLeastContext(%s, %d), cleared %v = %d, %v; want %d", c.moves, least, clear, got, err, c.score)
				}
			}
		}
		for _, least := range []int{c.score + 1, c.score + 5, MaxScore} {
			s.Table().Clear()
			if got, err := s.SolveAtLeastContext(ctx, p, least, least); !errors.Is(err, ErrBelowBound) {
				t.Errorf("SolveAtLeastContext(%s, %d) = %d, %v; want ErrBelowBound (the score is %d)", c.moves, least, got, err, c.score)
			}
		}
	}

	// Scores the rules give (a win with the next stone) and the oracle's.
	winNow, _ := Standard.Parse("121212")
	want := Standard.WinNowScore(winNow.Moves())
	if got, err := s.SolveAtLeastContext(ctx, winNow, want, 0); err != nil || got != want {
		t.Errorf("SolveAtLeastContext(121212, %d) = %d, %v; want %d", want, got, err, want)
	}
	if _, err := s.SolveAtLeastContext(ctx, winNow, want+1, 0); !errors.Is(err, ErrBelowBound) {
		t.Errorf("SolveAtLeastContext(121212, %d) = %v, want ErrBelowBound", want+1, err)
	}
	known, _ := Standard.Parse(signaturePositions[9].moves)
	s.SetOracle(&mapOracle{scores: map[uint64]int{known.Key(): 3}}, known.Moves())
	defer s.SetOracle(nil, 0)
	if got, err := s.SolveAtLeastContext(ctx, known, 3, 0); err != nil || got != 3 {
		t.Errorf("oracle's score 3 at least 3: %d, %v", got, err)
	}
	if _, err := s.SolveAtLeastContext(ctx, known, 4, 0); !errors.Is(err, ErrBelowBound) {
		t.Errorf("oracle's score 3 at least 4: %v, want ErrBelowBound", err)
	}
}

// TestNewShared: solvers sharing one table in parallel goroutines give the
// right scores (run with -race to check the table's accesses).
func TestNewShared(t *testing.T) {
	tab, err := NewTable(Standard, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewShared(tab)
			for i := range signaturePositions {
				c := signaturePositions[(i+g*4)%len(signaturePositions)]
				p, _ := Standard.Parse(c.moves)
				if got := s.Solve(p); got != c.score {
					t.Errorf("goroutine %d: Solve(%s) = %d, want %d", g, c.moves, got, c.score)
				}
			}
		}()
	}
	wg.Wait()
}

// TestSolver_Solve_noAlloc: the search allocates nothing, with or without
// an oracle (which only costs an allocation when asked).
func TestSolver_Solve_noAlloc(t *testing.T) {
	s, _ := New(Standard, 1<<20)
	p, _ := Standard.Parse(signaturePositions[4].moves)
	if n := testing.AllocsPerRun(3, func() { s.Table().Clear(); s.Solve(p) }); n != 0 {
		t.Errorf("Solve allocates %v times", n)
	}
	s.SetOracle(&mapOracle{scores: map[uint64]int{}}, 2) // never asked: p is deeper
	if n := testing.AllocsPerRun(3, func() { s.Table().Clear(); s.Solve(p) }); n != 0 {
		t.Errorf("Solve with an oracle allocates %v times", n)
	}
}
