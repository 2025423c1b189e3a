package solver

import (
	"sync/atomic"
)

// Solver finds the exact score of positions of one board. It keeps its
// transposition table between calls, so solving related positions one
// after another gets faster. A Solver is not safe for concurrent use, but
// several Solvers can share one table (NewShared).
type Solver struct {
	board *Board
	table *Table
	nodes uint64

	oracle         Oracle // exact scores of some positions, or nil
	oracleMaxMoves int    // ask the oracle about positions with at most this many stones

	// mirrorTable makes positions and their mirror images share table
	// entries. It pays only when both are met often: under a symmetric
	// root, such as the empty board, every position's mirror image is in
	// the tree too, and the search takes about half the nodes
	// (docs/solver.md, measurements behind the constants). Entries
	// are always about the position of their key, in its own orientation,
	// so searches with and without it share a table.
	mirrorTable bool

	// lines holds the lines of the node searched with each number of
	// stones: a node's children have more stones than the node, so the
	// nodes of a search never share theirs.
	lines [64]lineRow

	// stones holds the stones of each move's player in the node expand
	// works on, then the cells that complete their fours.
	stones [lineSlots]uint64

	// buckets holds the table buckets of the moves expand works on, to
	// prefetch them all at once.
	buckets [lineSlots]uint64

	// A stop request names the solve it is for. The function that asks
	// runs in a goroutine of its own (context.AfterFunc), maybe long after
	// its context ended, when its solve is over and the next one under
	// way: a request for an earlier solve must not stop a later one. run
	// numbers the solves (a Help counts as one); stopAt is the highest
	// number asked to stop, and a search stops when it is its own.
	run     uint64        // the current solve's number; of the solver's goroutine
	stopAt  atomic.Uint64 // the highest solve number asked to stop
	stopped bool          // the search is unwinding: results are void
	fault   error         // the run's value was not confirmed (check.go)

	team        atomic.Pointer[team] // s's helpers, if it has a team open
	helperNodes atomic.Uint64        // nodes searched by helpers for s
	job         *job                 // the team question s is searching, or nil
	jitter      uint64               // a helper's noise state, 0 for none
	jitterUntil int                  // a helper adds noise at nodes with fewer stones
}

// stopPollNodes is how often, in nodes, the search checks whether it was
// asked to stop: a few hundred microseconds.
const stopPollNodes = 1 << 10

// Oracle knows the exact score of some positions: an opening book, say.
type Oracle interface {
	// Score returns the exact score of p and true, or false if it does not
	// know p. p is not over.
	Score(p *Position) (int, bool)
}

// SetOracle makes the solver ask o for the score of every position with at
// most maxMoves stones it meets, before searching it. A nil o removes the
// oracle. Scores the oracle gives are trusted: a wrong one makes Solve
// wrong.
func (s *Solver) SetOracle(o Oracle, maxMoves int) {
	s.oracle, s.oracleMaxMoves = o, maxMoves
	if o == nil {
		s.oracleMaxMoves = -1
	}
}

// New returns a solver for board b with a transposition table of at most
// tableBytes bytes (DefaultTableBytes if 0).
func New(b *Board, tableBytes int64) (*Solver, error) {
	if tableBytes == 0 {
		tableBytes = DefaultTableBytes
	}
	t, err := NewTable(b, tableBytes)
	if err != nil {
		return nil, err
	}
	return &Solver{board: b, table: t, oracleMaxMoves: -1}, nil
}

// NewShared returns a solver that uses table t, which other solvers may
// use at the same time: threads solving related positions share what
// each finds. Each solver must be used by one goroutine at a time.
func NewShared(t *Table) *Solver {
	return &Solver{board: t.board, table: t, oracleMaxMoves: -1}
}

// Board returns the board the solver plays on.
func (s *Solver) Board() *Board { return s.board }

// Table returns the solver's transposition table.
func (s *Solver) Table() *Table { return s.table }

// Nodes returns the number of positions searched (calls of the search
// function) since the solver was made or ResetNodes was called, by the
// solver and its helpers (see Help).
func (s *Solver) Nodes() uint64 { return s.nodes + s.helperNodes.Load() }

// ResetNodes sets the node count to zero.
func (s *Solver) ResetNodes() {
	s.nodes = 0
	s.helperNodes.Store(0)
}

// askOracle returns the oracle's score of p, if p is shallow enough to ask
// and the oracle knows it. It takes p by pointer but hands the oracle a
// copy: a pointer passed to an interface method escapes, and the search's
// own position would then be allocated at every node.
func (s *Solver) askOracle(p *Position) (int, bool) {
	if p.moves > s.oracleMaxMoves {
		return 0, false
	}
	return s.oracleScore(*p)
}

// oracleScore asks the oracle about p, a copy that may escape.
//
//go:noinline
func (s *Solver) oracleScore(p Position) (int, bool) { return s.oracle.Score(&p) }
