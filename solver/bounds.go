package solver

import (
	"math/bits"
)

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
