package solver

import "math/bits"

// Solver finds the exact score of positions of one board. It keeps its
// transposition table between calls, so solving related positions one
// after another gets faster. A Solver is not safe for concurrent use.
type Solver struct {
	board *Board
	table *Table
	nodes uint64
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
	return &Solver{board: b, table: t}, nil
}

// Board returns the board the solver plays on.
func (s *Solver) Board() *Board { return s.board }

// Table returns the solver's transposition table.
func (s *Solver) Table() *Table { return s.table }

// Nodes returns the number of positions searched since the solver was made
// or ResetNodes was called.
func (s *Solver) Nodes() uint64 { return s.nodes }

// ResetNodes sets the node count to zero.
func (s *Solver) ResetNodes() { s.nodes = 0 }

// Solve returns the exact score of p (see score.go). p must be on the
// solver's board. A position whose last move made four scores as lost; a
// full board as a draw.
func (s *Solver) Solve(p Position) int {
	if v, ok := s.terminalScore(&p); ok {
		return v
	}
	lo, hi := s.board.ScoreRange(p.moves)
	return s.solveWindow(p, lo, hi)
}

// SolveWeak returns 1 if the player to move wins p, 0 for a draw and -1 for
// a loss. It is faster than Solve: it only tells the outcome.
func (s *Solver) SolveWeak(p Position) int {
	if v, ok := s.terminalScore(&p); ok {
		return Outcome(v)
	}
	return Outcome(s.solveWindow(p, -1, 1))
}

// Analyze returns the score of each column of p: the score of p if that
// column is played, or ok false for a column that cannot be played.
func (s *Solver) Analyze(p Position) (scores []int, ok []bool) {
	scores = make([]int, s.board.width)
	ok = make([]bool, s.board.width)
	if p.LastMoveWon() && p.moves > 0 {
		return scores, ok
	}
	for col := range s.board.width {
		if !p.CanPlay(col) {
			continue
		}
		ok[col] = true
		if p.IsWinningMove(col) {
			scores[col] = s.board.WinNowScore(p.moves)
			continue
		}
		child := p
		child.Play(col)
		scores[col] = -s.Solve(child)
	}
	return scores, ok
}

// terminalScore returns the score of p if the game is over or the player to
// move makes four at once.
func (s *Solver) terminalScore(p *Position) (int, bool) {
	switch {
	case p.moves > 0 && p.LastMoveWon():
		return s.board.LostScore(p.moves), true
	case p.IsFull():
		return 0, true
	case p.CanWinNext():
		return s.board.WinNowScore(p.moves), true
	}
	return 0, false
}

// solveWindow finds the score of p, known to lie in [lo, hi], by null-window
// searches that each halve the interval, trying scores nearer 0 first:
// those searches are the cheapest. p is not over and its player to move
// cannot win at once.
func (s *Solver) solveWindow(p Position, lo, hi int) int {
	for lo < hi {
		med := lo + (hi-lo)/2
		if med <= 0 && lo/2 < med {
			med = lo / 2
		} else if med >= 0 && hi/2 > med {
			med = hi / 2
		}
		// Is the score above med?
		if r := s.negamax(p, med, med+1); r <= med {
			hi = r
		} else {
			lo = r
		}
	}
	return lo
}

// negamax returns the score v of p searched in the window (alpha, beta),
// fail-soft:
//
//   - r <= alpha: v <= r;
//   - r >= beta:  v >= r;
//   - otherwise:  v == r.
//
// Preconditions: alpha < beta, p is not over and its player to move cannot
// make four at once.
func (s *Solver) negamax(p Position, alpha, beta int) int {
	s.nodes++
	b := s.board
	next := p.nonLosingMoves()
	if next == 0 {
		// Every move lets the opponent make four.
		return -(b.Cells() - p.moves) / 2
	}
	if p.moves >= b.Cells()-2 {
		// Both remaining stones are played without a four.
		return 0
	}
	// The opponent cannot win with their next stone: the score is at least
	// a loss to their stone after that.
	if lo := -(b.Cells() - 2 - p.moves) / 2; alpha < lo {
		alpha = lo
		if alpha >= beta {
			return alpha
		}
	}
	// We cannot win with this stone either.
	if hi := (b.Cells() - 1 - p.moves) / 2; beta > hi {
		beta = hi
		if alpha >= beta {
			return beta
		}
	}

	key := p.Key()
	e := s.table.get(key)
	switch e.bound() {
	case Exact:
		return e.score()
	case Lower:
		if v := e.score(); v > alpha {
			alpha = v
			if alpha >= beta {
				return alpha
			}
		}
	case Upper:
		if v := e.score(); v < beta {
			beta = v
			if alpha >= beta {
				return beta
			}
		}
	}
	alphaOrig := alpha

	var list moveList
	ttMove := e.move()
	for _, col := range b.order {
		move := next & b.columnMask(col)
		if move == 0 {
			continue
		}
		score := bits.OnesCount64(b.winningCells(p.current|move, p.mask|move))
		if col == ttMove {
			score = 1 << 10
		}
		list.add(move, score)
	}

	best, bestMove := -1<<10, -1
	for i := 0; i < list.n; i++ {
		child := p
		child.playMove(list.moves[i])
		v := -s.negamax(child, -beta, -alpha)
		if v > best {
			best, bestMove = v, b.columnOf(list.moves[i])
			if v >= beta {
				s.table.put(key, v, Lower, bestMove)
				return v
			}
			if v > alpha {
				alpha = v
			}
		}
	}
	if best <= alphaOrig {
		s.table.put(key, best, Upper, bestMove)
	} else {
		s.table.put(key, best, Exact, bestMove)
	}
	return best
}
