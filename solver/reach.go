package solver

// Threats returns the empty cells where the player to move, and where the
// opponent, would make four with one more stone, playable now or not, as
// bits of the Board layout.
func (p *Position) Threats() (mine, theirs uint64) {
	return p.board.winningCells(p.current, p.mask), p.opponentWinningCells()
}

// Playable returns the cells where a stone can be played now, one per
// column that is not full, as bits of the Board layout.
func (p *Position) Playable() uint64 { return p.possible() }

// OddRows returns the cells of the board's odd rows, counting from 1 at
// the bottom (rows 1, 3, 5 on 7x6): the rows where the first player's
// threats count in the theory of the game's end (Allis, 1988).
func (b *Board) OddRows() uint64 { return b.oddRows }

// LosesNext reports whether the player to move, who cannot make four now,
// has no move that stops the opponent making four with the next stone: the
// opponent has two playable fours, or the only moves are under one. Such a
// position scores Board.ScoreRange's lowest score, without a search. A
// position whose game is over, or that its player to move wins at once,
// does not lose next.
func (p *Position) LosesNext() bool {
	return !p.Over() && !p.CanWinNext() && p.nonLosingMoves() == 0
}

// maxUnplaySteps bounds the positions an unplayer visits before it
// remembers those it has found no way back from: a position made by play
// is answered in one pass, and only a position no game reaches (or a rare
// one) pays for the memory.
const maxUnplaySteps = 2048

// ReachableFrom reports whether a game from root reaches p: p holds the
// stones of root, and its other stones can be played, one player after the
// other, without a stone played after a four was made. p may be a position
// whose last stone made four; one with a four that an earlier stone made
// (or a four of the player to move) is not reached. root and p must be on
// the same board; a root whose game is over reaches only itself.
//
// A position made by playing moves from root is always reached; one
// rebuilt from a key (Board.PositionFromKey) may not be: its stones may be
// where no game puts them (the player to move holding every top stone, say).
func (p *Position) ReachableFrom(root Position) bool {
	if !p.board.Equal(root.board) || p.moves < root.moves || p.mask&root.mask != root.mask ||
		p.firstPlayerStones()&root.mask != root.firstPlayerStones() {
		return false
	}
	u := unplayer{root: root.mask, rootMoves: root.moves, fours: p.anyFour()}
	return u.unplay(*p)
}

// anyFour reports whether either player has four on the board.
func (p *Position) anyFour() bool {
	return p.board.hasFour(p.current) || p.board.hasFour(p.current^p.mask)
}

// firstPlayerStones returns the stones of the player who moved first.
func (p *Position) firstPlayerStones() uint64 {
	if p.moves%2 == 0 {
		return p.current
	}
	return p.current ^ p.mask
}

// unplayer looks for a game from a root to a position, backwards: it
// takes back the top stones of the player who moved last, one column at a
// time, never a stone of the root's, so that no earlier position holds a
// four.
type unplayer struct {
	root      uint64 // the root's stones
	rootMoves int
	moves     []byte          // if set, moves[i] is the column of stone rootMoves+i+1 of the game found
	dead      map[uint64]bool // keys of positions with no way back, once steps passed maxUnplaySteps
	steps     int
	// fours is set when the position asked about has a four: then every
	// position on the way back is checked for one. Without, none has one
	// (a four stays once made), and the way back is a matter of colours.
	fours bool
}

// unplay reports whether a game from the root reaches p, whose stones
// include the root's (with their colours), filling u.moves if set.
func (u *unplayer) unplay(p Position) bool {
	if p.moves == u.rootMoves {
		return p.mask == u.root
	}
	// A four of the player to move would have ended the game before.
	if u.fours && p.board.hasFour(p.current) || u.dead != nil && u.dead[p.Key()] {
		return false
	}
	if u.steps++; u.steps > maxUnplaySteps && u.dead == nil {
		u.dead = make(map[uint64]bool)
	}
	// The top stone of each column is the cell under its lowest empty
	// one (under the sentinel for a full column; for an empty column the
	// sentinel of the column before, never a stone). Those of the player
	// who moved last and not of the root may have been played last, from
	// the leftmost column.
	last := p.current ^ p.mask
	tops := (p.mask + p.board.bottom) >> 1 & p.mask & last &^ u.root
	for ; tops != 0; tops &= tops - 1 {
		top := tops & -tops
		prev := Position{board: p.board, current: last &^ top, mask: p.mask &^ top, moves: p.moves - 1}
		if u.unplay(prev) {
			if u.moves != nil {
				u.moves[p.moves-1-u.rootMoves] = byte('1' + p.board.columnOf(top))
			}
			return true
		}
	}
	if u.dead != nil {
		u.dead[p.Key()] = true
	}
	return false
}
