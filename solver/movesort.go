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

// ttMoveScore is the score of the table's best move, above any threat
// count.
const ttMoveScore = 1 << 10

// moveScore returns the ordering score of a move given the threats of the
// player who made it and of the opponent, after the move.
func moveScore(mine, theirs uint64) int {
	return bits.OnesCount64(mine &^ (theirs << 1))
}

// moveList is a list of moves kept sorted by score, highest first; among
// equal scores the one added first comes first. It holds at most one move a
// column.
type moveList struct {
	n      int
	moves  [MaxWidth]uint64 // single-cell masks
	scores [MaxWidth]int
}

// add inserts move with its score.
func (l *moveList) add(move uint64, score int) {
	i := l.n
	for ; i > 0 && l.scores[i-1] < score; i-- {
		l.moves[i] = l.moves[i-1]
		l.scores[i] = l.scores[i-1]
	}
	l.moves[i] = move
	l.scores[i] = score
	l.n++
}
