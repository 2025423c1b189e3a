package solver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Several threads solve one position faster than one when they share a
// table and do not search the same nodes in the same order: each answers
// the same question (is the score above med?), the helpers with their move
// order shuffled near the root, so that they run ahead into different
// subtrees and store what they find for the others. The first to answer
// ends the question for all. This is what c4 does (its "score jitter"), and
// Lazy SMP in chess engines.
//
// A Solver opens a team (OpenTeam); other solvers on its table join it
// with Help and take part in its searches until it closes the team or
// their context is done. A thread that has nothing of its own to solve
// can so help another's hard position, and leave it when work of its own
// comes.

// jitterPlies is how many plies below a question's position a helper
// shuffles its move order.
const jitterPlies = 8

// jitterNoise is the most a helper adds to a move's ordering score: up to
// one threat more (see moveScore).
const jitterNoise = 24

// noise returns a pseudo-random number in [0, jitterNoise) from the
// solver's jitter state (xorshift64).
func (s *Solver) noise() int {
	x := s.jitter
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	s.jitter = x
	return int(x % jitterNoise)
}

// team is the shared state of a solver and its helpers.
type team struct {
	mu      sync.Mutex
	current *job          // the latest question asked
	changed chan struct{} // closed when current changes or the team closes
	closed  bool

	helpers atomic.Int32  // helpers taking part
	joined  atomic.Uint64 // helpers that ever joined: their seeds
}

// job is one question of a search: the score of p in the window
// (alpha, beta), fail-soft.
type job struct {
	p           Position
	alpha, beta int
	mirror      bool // the leader's mirrorTable

	done atomic.Bool // answered or given up: the searches of it stop

	mu      sync.Mutex
	idle    sync.Cond // signalled when helpers leave
	result  int
	helpers int // helpers searching j
}

// join counts a helper in, unless j is done.
func (j *job) join() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.done.Load() {
		return false
	}
	j.helpers++
	return true
}

// leave counts a helper out.
func (j *job) leave() {
	j.mu.Lock()
	j.helpers--
	j.mu.Unlock()
	j.idle.Signal()
}

// finish records r as the answer to j unless j is done; it reports
// whether r is the answer.
func (j *job) finish(r int) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.done.Load() {
		return false
	}
	j.result = r
	j.done.Store(true)
	return true
}

// end marks j done, waits until no helper searches it and returns its
// answer, if it has one.
func (j *job) end() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done.Store(true)
	for j.helpers > 0 {
		j.idle.Wait()
	}
	return j.result
}

// ErrNotSameTable is returned by Help when the helper does not use the
// table of the solver it would help.
var ErrNotSameTable = errors.New("solver: a helper must use the table of the solver it helps")

// OpenTeam lets other solvers help s with its searches from now on (see
// Help). Opening an open team does nothing.
func (s *Solver) OpenTeam() {
	if s.team.Load() == nil {
		s.team.Store(&team{changed: make(chan struct{})})
	}
}

// CloseTeam ends s's team: its helpers' Help calls return. s may open a
// new one later.
func (s *Solver) CloseTeam() {
	t := s.team.Swap(nil)
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closed = true
	close(t.changed)
	t.mu.Unlock()
}

// Help makes helper take part in the searches of s until ctx is done or s
// closes its team; it returns at once if s has no team open. helper must
// share s's table (NewShared), and is used by Help alone meanwhile.
// Several helpers may help one solver. The nodes helper searches count in
// s.Nodes.
func (s *Solver) Help(ctx context.Context, helper *Solver) error {
	if helper.table != s.table {
		return ErrNotSameTable
	}
	t := s.team.Load()
	if t == nil {
		return nil
	}
	t.helpers.Add(1)
	defer t.helpers.Add(-1)
	n := helper.beginRun()
	release := stopAfter(ctx, func() { helper.requestStop(n) })
	defer release()
	helper.jitter = t.joined.Add(1)*0x9e3779b97f4a7c15 | 1
	var last *job
	for {
		t.mu.Lock()
		j, changed, closed := t.current, t.changed, t.closed
		t.mu.Unlock()
		switch {
		case closed || ctx.Err() != nil:
			return ctx.Err()
		case j != nil && j != last && j.join():
			last = j
			helper.stopped = false
			helper.job = j
			helper.mirrorTable = j.mirror
			helper.jitterUntil = j.p.moves + jitterPlies
			before := helper.nodes
			r := helper.search(j.p, j.alpha, j.beta)
			if !helper.stopped {
				j.finish(r)
			}
			helper.job = nil
			s.helperNodes.Add(helper.nodes - before)
			j.leave()
		default:
			select {
			case <-changed:
			case <-ctx.Done():
			}
		}
	}
}

// searchTeam is search, asked of s's helpers too when it has some: the
// first answer is the answer. It returns void, with s.stopped set, only
// when s's own stop was requested. When it returns, no helper searches for
// it.
func (s *Solver) searchTeam(p Position, alpha, beta int) int {
	t := s.team.Load()
	if t == nil || t.helpers.Load() == 0 {
		return s.search(p, alpha, beta)
	}
	j := &job{p: p, alpha: alpha, beta: beta, mirror: s.mirrorTable}
	j.idle.L = &j.mu
	t.mu.Lock()
	t.current = j
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()

	s.job = j
	r := s.search(p, alpha, beta)
	s.job = nil
	answered := !s.stopped && j.finish(r) || j.done.Load()
	// The helpers stop, and the question ends when they have: a table
	// is not searched once the search that asked returned.
	a := j.end()
	if !answered {
		return r // s was asked to stop: void
	}
	s.stopped = false
	return a
}
