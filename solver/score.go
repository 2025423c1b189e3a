package solver

// Scores follow Pascal Pons' convention. A score is the exact game value of
// a position for the player to move, with both sides playing perfectly:
//
//   - 0: the game is a draw;
//   - positive: the player to move wins; the score is Cells/2 + 1 minus the
//     number of stones the winner has played when the four is made, so a
//     win with the next stone on an empty-ish board scores highest (18 on
//     7x6 for a win with the 4th stone) and a win with the last stone 1;
//   - negative: the player to move loses, mirrored.
//
// In terms of the number of stones already on the board, a win with the
// next stone scores (Cells+1-moves)/2 and a loss to the opponent's next
// stone -(Cells-moves)/2. Every function turning a game outcome into a
// score, or a score into something else, is in this file.

// WinNowScore returns the score of a position with moves stones where the
// player to move makes four with the next stone.
func (b *Board) WinNowScore(moves int) int { return (b.Cells() + 1 - moves) / 2 }

// winWithStone returns the score of a position with moves stones whose
// player to move makes four with their n-th stone from now (n >= 1). For
// an n too high to be played before the board is full (2n > Cells-moves+3)
// it returns a score above every score, which bounds nothing from above:
// the search takes it as an upper bound. The division is unsigned, two
// instructions where a signed one takes five: these are in the search's
// every node.
func (b *Board) winWithStone(moves, n int) int { return int(uint(b.cells+3-moves-2*n) / 2) }

// lossWithStone returns the score of a position with moves stones whose
// opponent makes four with their n-th stone from now (n >= 1). For an n
// too high to be played (2n > Cells-moves+2) it returns a score below
// every score, which bounds nothing from below (see winWithStone).
func (b *Board) lossWithStone(moves, n int) int { return -int(uint(b.cells+2-moves-2*n) / 2) }

// LostScore returns the score of a position with moves stones in which the
// last stone played made four: the player to move has lost.
func (b *Board) LostScore(moves int) int { return -b.WinNowScore(moves - 1) }

// RuleScore returns the score of p, and true, when the rules alone give
// it, without a search: a game over (the last stone made four: LostScore;
// a full board: 0, a draw) or a win with the next stone (WinNowScore).
// Else it returns 0 and false.
func (p *Position) RuleScore() (int, bool) {
	if s, over := p.overScore(); over {
		return s, true
	}
	if p.CanWinNext() {
		return p.board.WinNowScore(p.moves), true
	}
	return 0, false
}

// RuleMoveScore returns the score of playing the playable column col of
// p, a position whose game is not over, for the player who plays it, and
// true, when the rules alone give it: a move that makes four scores
// WinNowScore, one that fills the board without a four 0. Else it
// returns 0 and false: the score is minus the child's, from a search or a
// book.
func (p *Position) RuleMoveScore(col int) (int, bool) {
	child := *p
	child.Play(col)
	s, over := child.overScore()
	return -s, over
}

// overScore returns the score of p, and true, if its game is over: lost
// if the last stone made four, drawn if the board is full.
func (p *Position) overScore() (int, bool) {
	switch {
	case p.moves > 0 && p.LastMoveWon():
		return p.board.LostScore(p.moves), true
	case p.IsFull():
		return 0, true
	}
	return 0, false
}

// ScoreRange returns the lowest and highest score a position with moves
// stones, whose last move did not make four, can have: a win with the next
// stone at best, a loss to the opponent's next stone at worst.
func (b *Board) ScoreRange(moves int) (lo, hi int) {
	return -(b.Cells() - moves) / 2, b.WinNowScore(moves)
}

// Outcome returns the weak score of a score: 1 for a win, 0 for a draw, -1
// for a loss.
func Outcome(score int) int {
	switch {
	case score > 0:
		return 1
	case score < 0:
		return -1
	}
	return 0
}

// PliesToEnd returns how many moves (of both players) the game lasts from
// a position with moves stones whose score is score, both sides playing
// perfectly: to the winner's four, or to the full board for a draw. It
// inverts winWithStone and lossWithStone.
func (b *Board) PliesToEnd(moves, score int) int {
	switch {
	case score > 0: // the winner's n-th stone: 2n-1 moves
		return 2*((b.Cells()+3-moves-2*score)/2) - 1
	case score < 0: // the opponent's n-th stone: 2n moves
		return 2 * ((b.Cells() + 2 - moves + 2*score) / 2)
	}
	return b.Cells() - moves
}

// MaxScore and MinScore bound the score of every position of every board:
// a board has fewer than 64 cells, and a win with the next stone scores
// half the empty cells, rounded up.
const (
	MaxScore = 32
	MinScore = -MaxScore
)

// infScore is beyond every score: the best of a search before any move.
const infScore = MaxScore + 1

// The transposition table stores a score in an unsigned field of
// scoreBits bits as score - scoreOffset.
const (
	scoreBits   = 7
	scoreOffset = MinScore
)

// toTableScore converts a score to its table field; fromTableScore is its
// inverse.
func toTableScore(score int) uint64 { return uint64(score - scoreOffset) }

// fromTableScore converts a table field back to the score; see
// toTableScore.
func fromTableScore(field uint64) int { return int(field) + scoreOffset }
