package solver

import (
	"math/bits"
)

// etcMinEmpty is the number of empty cells from which the search probes
// the table for every child before searching any (enhanced transposition
// cutoff). With fewer, subtrees are small and the probes cost more memory
// traffic than they save; with more, fewer searches are cut short by a
// child's entry (docs/solver.md, measurements behind the constants).
const etcMinEmpty = 8

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
