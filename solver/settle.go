package solver

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
