package solver

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
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
func (s *Solver) solveNear(p Position, guess int) int {
	if v, ok := p.RuleScore(); ok {
		return v
	}
	if v, ok := s.askOracle(&p); ok {
		return v // the oracle's word is trusted: asking again asks it
	}
	lo, hi := s.board.ScoreRange(p.moves)
	guess = max(lo, min(hi, guess))
	return s.confirmed(&p, s.solveWindow(p, lo, hi, guess-1))
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

// etcMinEmpty is the number of empty cells from which the search probes
// the table for every child before searching any (enhanced transposition
// cutoff). With fewer, subtrees are small and the probes cost more memory
// traffic than they save; with more, fewer searches are cut short by a
// child's entry (docs/solver.md, measurements behind the constants).
const etcMinEmpty = 8

// line is a position the search looks at: a move of the node being
// searched, followed by the forced moves that come after it (see settle).
// The table key and entry of the position are kept once probed, so that a
// child probed by its parent is not probed again.
//
// A line holds its position as Position's fields without the board, so
// that the lines of a search, kept by the Solver for each number of
// stones, hold no pointer: the search writes them at every node, without
// clearing them first and without the garbage collector's write barriers.
type line struct {
	current, mask uint64 // the position p, as in Position
	moves         int
	move          uint64     // the move, a cell of the node searched
	mine          uint64     // the threats of the node's player after the move
	threats       uint64     // the threats of the opponent of p's player to move
	next          uint64     // the moves of p that do not let the opponent make four
	key           uint64     // table key of p
	bucket        uint64     // the index of key's bucket in the table (see Table.bucket)
	entry         tableEntry // p's table entry when probed
	flo, fhi      int8       // facts on p's value from settleStatic, seen by its player to move
	flipped       bool       // an odd number of forced moves were played
	expanded      bool       // mine and next are set (see expand)
	keyed         bool       // key, bucket and mirrored are set
	probed        bool       // entry is set too
	mirrored      bool       // key is the key of p's mirror image
}

// lineRow holds the lines of one node, one for each of its moves. It has
// a power of two of them, at least MaxWidth, so that the search indexes it
// through a mask (at) and the compiler checks no bounds: bounds checks
// were 3% of the search's instructions.
type lineRow [lineSlots]line

// lineSlots is the length of a lineRow.
const lineSlots = 16

// at returns the line at index i, i < lineSlots.
func (r *lineRow) at(i int) *line { return &r[i&(lineSlots-1)] }

// position returns the line's position on board b.
func (n *line) position(b *Board) Position {
	return Position{board: b, current: n.current, mask: n.mask, moves: n.moves}
}

// setPosition makes p the line's position.
func (n *line) setPosition(p *Position) { n.current, n.mask, n.moves = p.current, p.mask, p.moves }

// settled says what settle found about a line.
type settled uint8

const (
	open    settled = iota // nothing: the line's position must be searched
	known                  // the result of a search in the window, fail-soft
	bounded                // an upper bound on the value, not enough to cut
)

// settle plays the forced moves of n.p (a player who must block a four,
// or has one move only that does not let the opponent make four) and
// looks at what is known without a search of the position reached: the
// game ends, a bound closes the window (alpha, beta), or the table knows
// enough. Forced moves do not change a position's value, up to its sign,
// so the position after them stands for n.p. It returns the value of the
// line's first position, n.p before the forced moves, as the result of a
// search in the window (known), as an upper bound (bounded), or nothing
// (open); n.p is then the position to search and n.flipped says whether
// its player to move is the opponent of the line's.
//
// It is done in two steps, settleStatic and settleTable, so that a node
// can take the first for all its moves while their table buckets are on
// their way from memory.
//
// Precondition: the player to move in n.p cannot make four at once.
func (s *Solver) settle(n *line, alpha, beta int) (int, settled) {
	if v, r := s.settleStatic(n, alpha, beta); r == known {
		return v, r
	}
	return s.settleTable(n, alpha, beta)
}

// settleStatic is the part of settle that looks at the position alone. It
// returns known or open; when open, n.flo and n.fhi are facts about the
// value of the position reached, seen by its player to move.
func (s *Solver) settleStatic(n *line, alpha, beta int) (int, settled) {
	b := s.board
	// The position reached, as Position's fields in locals: the loop
	// keeps them in registers.
	cur, mask, moves := n.current, n.mask, n.moves
	var threats, next uint64
	if n.expanded {
		threats, next = n.mine, n.next
	} else {
		threats = b.winningCells(cur^mask, mask)
		n.mine = threats
		next = b.nonLosingMoves(mask, threats)
	}
	n.probed, n.expanded = false, false
	// flo and fhi are facts: bounds on the value of the position reached,
	// seen by its player to move, true whatever the window.
	var flo, fhi int
	flipped := false
	for {
		if next == 0 && moves < b.cells {
			n.flipped = flipped
			return orient(b.lossWithStone(moves, 1), flipped), known
		}
		if moves >= b.cells-2 {
			// A full board, or both remaining stones are played without
			// a four.
			n.flipped = flipped
			return 0, known
		}
		// Neither player makes four with their next stone. (These bounds
		// are never looser than those of the position before a forced
		// move, negated: the same upper bound, a lower bound one higher.)
		flo, fhi = b.lossWithStone(moves, 2), b.winWithStone(moves, 2)
		if v, cut := closes(alpha, beta, flo, fhi); cut {
			n.flipped = flipped
			return orient(v, flipped), known
		}
		if next&(next-1) != 0 {
			break
		}
		// One move only: play it.
		cur, mask, moves = cur^mask, mask|next, moves+1
		threats = b.winningCells(cur^mask, mask)
		next = b.nonLosingMoves(mask, threats)
		n.keyed = false
		flipped = !flipped
		alpha, beta = -beta, -alpha
	}
	n.flipped = flipped
	n.threats, n.next = threats, next
	p := Position{board: b, current: cur, mask: mask, moves: moves}
	lo, hi := s.staticBounds(&p, threats, alpha, beta)
	flo, fhi = max(flo, lo), min(fhi, hi)
	if v, cut := closes(alpha, beta, flo, fhi); cut {
		return orient(v, flipped), known
	}
	n.flo, n.fhi = int8(flo), int8(fhi)
	if moves != n.moves { // forced moves were played
		n.current, n.mask, n.moves = cur, mask, moves
	}
	return 0, open
}

// orient returns v, a value seen by the player to move of the position
// reached after the forced moves, seen by the line's player: the same if
// their number is even (flipped false), else negated.
func orient(v int, flipped bool) int {
	if flipped {
		return -v
	}
	return v
}

// settleTable is the part of settle that probes the table, after
// settleStatic left n open. The window is that of the line's first
// position, as for settleStatic.
func (s *Solver) settleTable(n *line, alpha, beta int) (int, settled) {
	sign := 1
	if n.flipped {
		sign = -1
		alpha, beta = -beta, -alpha
	}
	flo, fhi := int(n.flo), int(n.fhi)
	if s.board.Cells()-n.moves >= etcMinEmpty {
		if !n.keyed {
			s.setKey(n)
		}
		n.entry = s.table.getAt(n.bucket, n.key)
		n.probed = true
		switch n.entry.bound() {
		case Exact:
			return sign * n.entry.score(), known
		case Lower:
			flo = max(flo, n.entry.score())
		case Upper:
			fhi = min(fhi, n.entry.score())
		}
		if v, cut := closes(alpha, beta, flo, fhi); cut {
			return sign * v, known
		}
	}
	// An upper bound of the line's first position is worth returning.
	if sign > 0 && fhi < beta {
		return fhi, bounded
	}
	if sign < 0 && flo > alpha {
		return -flo, bounded
	}
	return 0, open
}

// closes reports whether the facts lo <= v <= hi about a value v decide a
// search of it in the window (alpha, beta), and the fail-soft result.
func closes(alpha, beta, lo, hi int) (int, bool) {
	switch {
	case lo >= beta:
		return lo, true
	case hi <= alpha:
		return hi, true
	case lo == hi:
		return lo, true
	}
	return 0, false
}

// search returns the value of p searched in the window (alpha, beta),
// fail-soft (see negamax). Preconditions: alpha < beta, p is not over and
// its player to move cannot make four at once.
func (s *Solver) search(p Position, alpha, beta int) int {
	var n line
	n.setPosition(&p)
	v, r := s.settle(&n, alpha, beta)
	switch {
	case r == known:
		return v
	case n.flipped:
		return -s.searchOpen(&n, -beta, -alpha)
	}
	return s.searchOpen(&n, alpha, beta)
}

// searchOpen returns the value of n.p, settled and left open, for its
// player to move, searched in the window (alpha, beta), fail-soft (see
// negamax): decided by a move that leaves the opponent no answer (see
// expand), or else searched by negamax.
func (s *Solver) searchOpen(n *line, alpha, beta int) int {
	k, wins := s.expand(n)
	if wins {
		return s.board.winWithStone(n.moves, 2)
	}
	return s.negamax(n, k, alpha, beta)
}

// expand writes the lines of n's moves, n.next, to s.lines[n.moves], the
// positions after them, and takes the first step of settling each: the
// threats the move leaves its player and the opponent's answers that do
// not lose at once. It stops at a move that leaves the opponent none, and
// reports it: n's player then makes four with their second stone, the
// highest score left to them (settle found no four with the first), and
// n needs no search. It returns the number of lines written.
//
// This is a static rule like those of settle: a move that makes two
// threats the opponent cannot both stop. It is taken for a line about to
// be searched, not for every line settled, because the work is the first
// step of settling the lines of n's node, which the search then does not
// do again.
func (s *Solver) expand(n *line) (k int, wins bool) {
	b := s.board
	lines := &s.lines[n.moves&63] // n.moves < 64: a mask, not a bounds check
	prefetch := b.cells-n.moves > etcMinEmpty
	cur, mask, moves := n.current, n.mask, n.moves+1
	stones, buckets := &s.stones, &s.buckets
	for m := n.next; m != 0; m &= m - 1 {
		c := lines.at(k)
		move := m & -m
		// The child: the opponent to move, n's player's stones cur|move.
		c.move = move
		c.current, c.mask, c.moves = cur^mask, mask|move, moves
		if c.keyed = prefetch; prefetch {
			s.setKey(c)
			buckets[k&(lineSlots-1)] = c.bucket
		}
		stones[k&(lineSlots-1)] = cur | move
		k++
	}
	if prefetch {
		s.table.prefetchEach(buckets, k)
	}
	// The threats of n's player after each move, all at once.
	if b.stride == 7 && haveAVX2 {
		fourCells7AVX2(stones, k)
	} else {
		b.fourCellsOf(stones, k)
	}
	empty := b.full ^ mask
	for i := range k {
		c := lines.at(i)
		c.mine = stones[i&(lineSlots-1)] & empty &^ c.move
		c.next = b.nonLosingMoves(c.mask, c.mine)
		c.expanded = true
		if c.next == 0 {
			return i + 1, true
		}
	}
	return k, false
}

// negamax returns the score v of n.p searched in the window (alpha, beta),
// fail-soft:
//
//   - r <= alpha: v <= r;
//   - r >= beta:  v >= r;
//   - otherwise:  v == r.
//
// Preconditions: alpha < beta, and n was settled and left open: n.p is not
// over, its player to move cannot make four at once and has two moves or
// more that do not let the opponent make four; its k lines are expanded
// in s.lines[n.moves] and none leaves the opponent without an answer.
func (s *Solver) negamax(n *line, k int, alpha, beta int) int {
	s.nodes++
	if s.nodes%stopPollNodes == 0 && (s.stopRequested() || s.job != nil && s.job.done.Load()) {
		s.stopped = true
	}
	if s.stopped {
		return 0
	}
	b := s.board
	pos := n.position(b)
	p := &pos
	if v, ok := s.askOracle(p); ok {
		return v
	}
	if !n.probed {
		if !n.keyed {
			s.setKey(n)
		}
		s.table.prefetchAt(n.bucket)
	}
	alphaOrig, betaOrig := alpha, beta
	// Neither player makes four with their next stone (settle).
	alpha = max(alpha, b.lossWithStone(p.moves, 2))
	beta = min(beta, b.winWithStone(p.moves, 2))

	theirThreats := n.threats
	// Every child is settled, which probes its table entry: expand
	// fetched their buckets, all at once, and they are settled without
	// the table first, so that the probes find the buckets in the cache.
	// A probe of a large table is otherwise a trip to memory, most of a
	// node's time.
	lines := &s.lines[p.moves&63] // p.moves < 64: a mask, not a bounds check
	prefetch := b.Cells()-p.moves > etcMinEmpty
	best := -infScore
	var unsettled uint32 // lines left open by settleStatic
	for i := range k {
		c := lines.at(i)
		v, r := s.settleStatic(c, -beta, -alpha)
		if r == open {
			// i < k <= lineSlots: the mask spares the shift its check.
			unsettled |= 1 << (i & 31)
			if prefetch && !c.keyed { // forced moves were played
				s.setKey(c)
				s.table.prefetchAt(c.bucket)
			}
			continue
		}
		if v = -v; v > best {
			best = v
			if v > alpha {
				alpha = v
				if alpha >= beta {
					return v
				}
			}
		}
	}

	// Then with the table: a child's entry may decide the search. Those
	// left open are searched after.
	var list moveList
	for ; unsettled != 0; unsettled &= unsettled - 1 {
		i := bits.TrailingZeros32(unsettled)
		c := lines.at(i)
		v, r := s.settleTable(c, -beta, -alpha)
		if r != open {
			if v = -v; v > best {
				best = v
				if v > alpha {
					alpha = v
					if alpha >= beta {
						return v
					}
				}
			}
		}
		if r != known {
			score := moveScore(c.mine, theirThreats&^c.move, ((p.mask|c.move)+b.bottom)&b.full)*16 + b.centralityOf(c.move)
			if s.jitter != 0 && p.moves < s.jitterUntil {
				score += s.noise()
			}
			list.add(i, score)
		}
	}
	if list.n == 0 {
		return best
	}
	// No move makes our next four sure (settle found none), so p scores
	// at most a win with the stone after.
	beta = min(beta, b.winWithStone(p.moves, 3))
	if alpha >= beta {
		return beta
	}

	if !n.probed {
		n.entry = s.table.getAt(n.bucket, n.key)
	}
	e := n.entry
	switch e.bound() {
	case Exact:
		return e.score()
	case Lower:
		alpha = max(alpha, e.score())
	case Upper:
		beta = min(beta, e.score())
	}
	if alpha >= beta {
		return e.score()
	}
	if ttMove := e.move(); ttMove >= 0 {
		if n.mirrored {
			ttMove = b.width - 1 - ttMove
		}
		list.promote(lines[:], b.columnMask(ttMove))
	}

	nodesBefore := s.nodes
	bestMove := -1
	for i := 0; i < list.n; i++ {
		c := lines.at(int(list.index[i]))
		var v int
		if c.flipped {
			v = s.searchOpen(c, alpha, beta)
		} else {
			v = -s.searchOpen(c, -beta, -alpha)
		}
		if s.stopped {
			return 0 // void: nothing may be stored
		}
		if v > best {
			best = v
			bestMove = b.columnOf(c.move)
			if v > alpha {
				alpha = v
				if alpha >= beta {
					break
				}
			}
		}
	}
	if bestMove >= 0 && n.mirrored {
		bestMove = b.width - 1 - bestMove
	}
	s.table.putAt(n.bucket, n.key, best, boundOf(best, alphaOrig, betaOrig, e), bestMove, s.nodes-nodesBefore)
	return best
}

// boundOf returns what a search result r in the window (alpha, beta) tells
// of the value: an upper bound if r <= alpha, a lower bound if r >= beta,
// else the value. A bound that meets the opposite bound of the position's
// table entry e makes the value exact.
func boundOf(r, alpha, beta int, e tableEntry) Bound {
	switch {
	case r <= alpha:
		if e.bound() == Lower && e.score() == r {
			return Exact
		}
		return Upper
	case r >= beta:
		if e.bound() == Upper && e.score() == r {
			return Exact
		}
		return Lower
	}
	return Exact
}

// staticBounds returns bounds on the score of p found without a search,
// besides those of the next two stones, which settleStatic has already
// (neither player makes four with their next stone: p scores between a
// loss to the opponent's second stone and a win with its player's):
//
//   - A player who cannot make four even with every empty cell cannot win.
//   - The evens strategy (see evensBound) and the odd threat (see
//     oddThreatBound).
//
// A bound is looked for only if it could close the window (alpha, beta):
// the search needs no other.
//
// Precondition: p is not over, p's player cannot make four at once and has
// a non-losing move.
func (s *Solver) staticBounds(p *Position, threats uint64, alpha, beta int) (lo, hi int) {
	b := s.board
	lo, hi = -infScore, infScore
	// Early in the game every player has room for a four and the evens
	// strategy never beats the bounds of the next two stones: the checks
	// are skipped before half (a third) of the board is filled, with the
	// same node counts on every reference set.
	if p.moves >= b.roomFrom {
		empty := b.full &^ p.mask
		if alpha >= 0 && !b.hasFour(p.current|empty) {
			hi = min(hi, 0)
		}
		if beta <= 0 && !b.hasFour(p.current^p.mask|empty) {
			lo = max(lo, 0)
		}
	}
	if p.moves >= b.evensFrom {
		if p.moves%2 == 0 {
			if alpha >= b.evensFloor {
				hi = min(hi, s.evensBound(p))
			}
		} else if alpha >= b.oddThreatFloor && threats&b.oddRows != 0 {
			hi = min(hi, s.oddThreatBound(p, threats))
		}
	}
	return lo, hi
}

// oddThreatBound returns an upper bound on the score of p from an odd
// threat of the opponent, or a bound too high to matter when there is
// none that works. The board has an even number of rows and p an odd
// number of stones: the player to move, O, is the second player and the
// opponent, X, the first. threats are X's winning cells.
//
// X has an odd threat: a cell t that makes four for X, in an odd row
// (counting rows from 1 at the bottom) of a column c of odd height, whose
// lowest empty cell is thus in an even row. X answers every move of O:
// on top of it, except when O plays in a column of odd height other than
// c, which X answers in the lowest cell of another such column (there is
// one: the number of empty cells is odd, so is the number of columns of
// odd height, c among them). Then X gets the odd cells of c, and when O
// plays right under t, X plays t and wins; O, to avoid it, must fill the
// other columns first, getting at most their empty cells of an odd row
// and the lowest empty cell of each of odd height, and the cells of an
// even row below t in c. If those cells and O's stones hold no four, O
// never makes four and X wins with t at the latest, when only the cells
// above t are left.
//
// When c has even height instead, its lowest empty cell in an odd row
// below t, there is a column c' of odd height (their number is odd). X
// answers O's moves in c on top, and pairs the columns of odd height
// other than c' as above, until O plays in c' (X answers in c) or plays
// in c two cells below t (X answers in c'). Either way c then has odd
// height, the other columns of odd height are even in number, and X goes
// on as above. O gets at most the same cells outside c, and in c every
// empty cell below t, of either row.
func (s *Solver) oddThreatBound(p *Position, threats uint64) int {
	b := s.board
	empty := b.full &^ p.mask
	low := p.possible() &^ b.oddRows // the lowest empty cells of the columns of odd height
	bound := b.Cells()
	for t := threats & b.oddRows & b.above(p.possible()); t != 0; t &= t - 1 {
		cell := t & -t
		col := b.columnMask(b.columnOf(cell))
		below := empty & col & (cell - 1)
		if low&col != 0 { // c of odd height: O gets its even cells only
			below &^= b.oddRows
		}
		theirs := p.current | (empty&b.oddRows|low)&^col | below
		if !b.hasFour(theirs) {
			row := bits.TrailingZeros64(cell) % int(b.stride)
			bound = min(bound, b.LostScore(b.Cells()-(b.height-1-row)))
		}
	}
	return bound
}

// evensBound returns an upper bound on the score of p from the evens
// strategy of the opponent, or a bound too high to matter when the
// strategy does not apply. The board has an even number of rows and an
// even number of stones, so the player to move, X, is the first player.
//
// The opponent, O, can answer every move of X so that after O's reply every
// column holds an even number of stones: when X plays in a column of even
// height, O plays on top of it; when X plays in a column of odd height, O
// plays in another column of odd height (there is one: the number of
// columns of odd height is even, as the number of stones is). Played this
// way, O gets every empty cell of an even row (counting rows from 1 at the
// bottom), except perhaps the lowest empty cell of a column of odd height,
// and X gets at most the other empty cells. If X's possible cells then
// hold no four that X could make before O makes one of O's sure cells, X
// never makes four: X cannot win, and if O's sure cells hold a four, O
// wins.
func (s *Solver) evensBound(p *Position) int {
	b := s.board
	empty := b.full &^ p.mask
	evenRows := b.full &^ b.oddRows
	theirs := p.current ^ p.mask | empty&evenRows&^p.possible()
	mine := b.full &^ theirs
	if b.hasLine(mine, 1) {
		return b.Cells() // a vertical four of X: no bound
	}
	// A four of X is harmless if a four of O lies below it, in the same
	// columns: X cannot fill its four's cells before every cell under
	// them, O's four among them, is filled, and O has won by then. X's
	// threats are harmless too: a cell of such a four is never playable.
	// oh: O's horizontal fours; xh, xu, xd: X's horizontal fours and
	// diagonal ones going up and down to the right. On the standard
	// board, with constant shifts, as in winningCells.
	var oh, xh, xu, xd uint64
	if s := b.stride; s == 7 {
		oh, xh, xu, xd = lineStarts(theirs, 7), lineStarts(mine, 7), lineStarts(mine, 8), lineStarts(mine, 6)
	} else {
		oh, xh, xu, xd = lineStarts(theirs, s), lineStarts(mine, s), lineStarts(mine, s+1), lineStarts(mine, s-1)
	}
	switch {
	case xh|xu|xd == 0: // X never makes four
		if oh != 0 || b.hasFour(theirs) {
			return b.evensLoss(oh, theirs, empty)
		}
		return 0
	case oh == 0: // a four of X, and none of O below it
		return b.Cells()
	}
	above := b.above(oh)
	if xh&^above|xu&^above|xd&^(above<<3) != 0 {
		return b.Cells() // a harmful four of X
	}
	return b.evensLoss(oh, theirs, empty)
}

// lineStarts returns the first cells (lowest bit index) of the fours of
// stones along the direction whose neighbour is s bits away.
func lineStarts(stones uint64, s uint) uint64 {
	m := stones & (stones >> s)
	return m & (m >> (2 * s))
}

// above returns the cells above any of cells in the same column. Per
// column, with the sentinel bit set the column's value is never 0, so
// subtracting 1 from it does not borrow from the next column and flips its
// bits up to its lowest set bit: the others are the cells above.
func (b *Board) above(cells uint64) uint64 {
	x := cells | b.sentinels
	return b.full &^ (x ^ (x - b.bottom))
}

// evensLoss returns an upper bound on the score of X when O wins by the
// evens strategy (see evensBound), found from when O's fours are made at
// the latest. The cells above a cell, in its column, are filled after it,
// so a four whose highest empty cell is in row r (0-based) is made by move
// Cells-(H-1-r) at the latest, O's stone number (Cells-(H-1-r))/2: the
// lower the four, the sooner O wins. oh holds the first cells of O's
// horizontal fours, all of whose cells are in one row. Of the diagonal
// fours only the highest empty cell of them all is used: a bound for each
// of them.
func (b *Board) evensLoss(oh, theirs, empty uint64) int {
	lossAtRow := func(r int) int { return b.LostScore(b.Cells() - (b.height - 1 - r)) } // b.evensFloor is lossAtRow(0)
	bound := -1
	for r := 0; r < b.height; r++ {
		if oh&(b.bottom<<uint(r)) != 0 {
			bound = min(bound, lossAtRow(r))
			break
		}
	}
	var diagonal uint64
	for _, d := range [2]uint{b.stride - 1, b.stride + 1} {
		first := lineStarts(theirs, d)
		diagonal |= first | first<<d | first<<(2*d) | first<<(3*d)
	}
	if diagonal &= empty; diagonal != 0 {
		r := b.height - 1
		for diagonal&(b.bottom<<uint(r)) == 0 {
			r--
		}
		bound = min(bound, lossAtRow(r))
	}
	return bound
}
