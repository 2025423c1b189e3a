package solver

import "math/bits"

// Move ordering. Alpha-beta cuts the most when the best move is searched
// first, so the moves of a position are searched in the order of a cheap
// guess of their strength: the move the table remembers as best first,
// then the moves that leave their player the most useful threats, the
// center columns first among equals.
//
// A threat is an empty cell that would make four. A threat directly above
// an opponent's threat is useless: whoever plays below it lets the
// opponent win, so it is never played while the threat below stands.
// Counting only useful threats orders better than counting them all
// (fewer nodes on every reference set).

// moveScore returns the ordering score of a move given the threats of the
// player who made it and of the opponent, and the playable cells, after
// the move. A useful threat right above a playable cell counts twice: the
// opponent cannot play under it, and it is the kind that wins games
// (docs/solver.md, measurements behind the constants).
func moveScore(mine, theirs, possible uint64) int {
	useful := mine &^ (theirs << 1)
	return bits.OnesCount64(useful) + bits.OnesCount64(useful&(possible<<1))
}

// moveList is the order in which the lines of a node are searched: their
// indexes, sorted by score, highest first; among equal scores the one added
// first comes first.
type moveList struct {
	n      int
	index  [MaxWidth]int8
	scores [MaxWidth]int
}

// add inserts line i with its score.
func (l *moveList) add(i int, score int) {
	j := l.n
	for ; j > 0 && l.scores[j-1] < score; j-- {
		l.index[j] = l.index[j-1]
		l.scores[j] = l.scores[j-1]
	}
	l.index[j] = int8(i)
	l.scores[j] = score
	l.n++
}

// promote moves the line whose move is in column (the cells of a column),
// if listed, to the front.
func (l *moveList) promote(lines []line, column uint64) {
	for j := 0; j < l.n; j++ {
		if lines[l.index[j]].move&column != 0 {
			i := l.index[j]
			copy(l.index[1:j+1], l.index[:j])
			l.index[0] = i
			return
		}
	}
}
