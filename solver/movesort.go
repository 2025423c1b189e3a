package solver

// Move ordering. Alpha-beta cuts the most when the best move is searched
// first, so the moves of a position are searched in the order of a cheap
// guess of their strength: the move the table remembers as best, then the
// moves creating the most threats (empty cells that would make four), the
// center columns first among equals.

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
