package solver

import (
	"fmt"
	"iter"
	"math/bits"
	"strings"
)

// Position is a Connect 4 position: the stones of the player to move, all
// stones, and the number of stones played. See Board for the bit layout.
// A Position is a small value: copy it to keep a position before playing.
//
// On the 7x6 board, after the moves "4453" (player 1 played 4, 5; player 2
// played 4, 3; player 1 is to move):
//
//	. . . . . . .
//	. . . . . . .
//	. . . . . . .
//	. . . . . . .
//	. . . O . . .       current: 4 + 5 -> bits 21, 28
//	. . O X X . .       mask:    bits 21, 22, 28, 14
//	1 2 3 4 5 6 7       key = current + mask: columns 3 (bits 14..20) = 1,
//	                    4 (bits 21..27) = 0b100, 5 (bits 28..34) = 0b10
//
// X is the player to move (current), O the opponent.
type Position struct {
	board   *Board
	current uint64 // stones of the player to move
	mask    uint64 // all stones
	moves   int    // stones on the board
}

// NewPosition returns the empty board.
func (b *Board) NewPosition() Position { return Position{board: b} }

// Board returns the board the position is played on.
func (p *Position) Board() *Board { return p.board }

// Moves returns the number of stones played.
func (p *Position) Moves() int { return p.moves }

// CanPlay reports whether column col (0-based) is on the board and not full.
func (p *Position) CanPlay(col int) bool {
	return col >= 0 && col < p.board.width && p.mask&p.board.topCell(col) == 0
}

// Play drops a stone of the player to move in column col (0-based).
// The column must be playable (see CanPlay) and the game not over.
func (p *Position) Play(col int) {
	p.playMove((p.mask + p.board.bottomCell(col)) & p.board.columnMask(col))
}

// playMove plays the single-cell mask move, a playable cell.
func (p *Position) playMove(move uint64) {
	p.current ^= p.mask
	p.mask |= move
	p.moves++
}

// Children yields each playable column of p, left to right, with the
// position after it is played. p's game must not be over.
func (p Position) Children() iter.Seq2[int, Position] {
	return func(yield func(int, Position) bool) {
		for col := range p.board.width {
			if !p.CanPlay(col) {
				continue
			}
			child := p
			child.Play(col)
			if !yield(col, child) {
				return
			}
		}
	}
}

// IsWinningMove reports whether playing the playable column col makes four
// for the player to move.
func (p *Position) IsWinningMove(col int) bool {
	return p.winningMoves()&p.board.columnMask(col) != 0
}

// CanWinNext reports whether the player to move can make four now.
func (p *Position) CanWinNext() bool { return p.winningMoves() != 0 }

// LastMoveWon reports whether the last stone played made four.
func (p *Position) LastMoveWon() bool { return p.board.hasFour(p.current ^ p.mask) }

// IsFull reports whether every cell holds a stone.
func (p *Position) IsFull() bool { return p.moves == p.board.Cells() }

// Over reports whether p's game is over: the last stone made four, or the
// board is full. Such a position has no moves, and RuleScore scores it.
func (p *Position) Over() bool {
	_, over := p.overScore()
	return over
}

// Key returns a number that identifies the position on its board:
// current + mask, which for each column is the column's stones of the
// player to move plus 2^h - 1 for a column of height h. Columns do not
// carry into each other and different positions have different keys.
// The key fits in Board.KeyBits bits.
func (p *Position) Key() uint64 { return p.current + p.mask }

// MirrorKey returns the key of the position mirrored left to right.
func (p *Position) MirrorKey() uint64 { return p.board.mirrorKey(p.Key()) }

// CanonicalKey returns the smaller of Key and MirrorKey, shared by a position
// and its mirror image.
func (p *Position) CanonicalKey() uint64 { return min(p.Key(), p.MirrorKey()) }

// Mirror returns the position mirrored left to right.
func (p *Position) Mirror() Position {
	b := p.board
	return Position{
		board:   b,
		current: b.mirrorKey(p.current),
		mask:    b.mirrorKey(p.mask),
		moves:   p.moves,
	}
}

// canonicalKey returns the smaller of key and its mirror image, and
// whether that is the mirror image.
func (b *Board) canonicalKey(key uint64) (uint64, bool) {
	if m := b.mirrorKey(key); m < key {
		return m, true
	}
	return key, false
}

// mirrorKey reverses the order of the columns of a bitboard.
func (b *Board) mirrorKey(x uint64) uint64 {
	if b.width == 7 && b.stride == 7 {
		// The standard board, with constant shifts: columns 1 and 7, 2
		// and 6, 3 and 5 swap places.
		const c = 1<<7 - 1
		return x&(c<<21) |
			(x&c)<<42 | (x>>42)&c |
			(x&(c<<7))<<28 | (x>>28)&(c<<7) |
			(x&(c<<14))<<14 | (x>>14)&(c<<14)
	}
	column := uint64(1)<<b.stride - 1
	var m uint64
	for c, d := 0, b.width-1; c < b.width; c, d = c+1, d-1 {
		m |= (x >> (uint(c) * b.stride) & column) << (uint(d) * b.stride)
	}
	return m
}

// PositionFromKey rebuilds the position whose Key is key, or returns an
// error if key is not the key of a position with no more stones of one
// player than is possible on this board. It does not check that the
// position can be reached in a game (a four made earlier).
func (b *Board) PositionFromKey(key uint64) (Position, error) {
	if b.KeyBits() < 64 && key>>uint(b.KeyBits()) != 0 {
		return Position{}, fmt.Errorf("key %#x: more than %d bits for board %v", key, b.KeyBits(), b)
	}
	column := uint64(1)<<b.stride - 1
	p := Position{board: b}
	for c := 0; c < b.width; c++ {
		shift := uint(c) * b.stride
		x := key>>shift&column + 1 // stones + 2^h
		h := bits.Len64(x) - 1
		if h > b.height {
			return Position{}, fmt.Errorf("key %#x: column %d overflows", key, c+1)
		}
		p.current |= (x - 1<<uint(h)) << shift
		p.mask |= (uint64(1)<<uint(h) - 1) << shift
		p.moves += h
	}
	// The player to move has as many stones as the opponent (even moves)
	// or one less.
	mine := bits.OnesCount64(p.current)
	if theirs := p.moves - mine; theirs-mine != p.moves%2 {
		return Position{}, fmt.Errorf("key %#x: %d stones against %d is not a position of a game", key, mine, theirs)
	}
	return p, nil
}

// possible returns the playable cells: the lowest empty cell of each column
// that is not full.
func (p *Position) possible() uint64 { return (p.mask + p.board.bottom) & p.board.full }

// winningMoves returns the playable cells that make four for the player to
// move.
func (p *Position) winningMoves() uint64 {
	return p.board.winningCells(p.current, p.mask) & p.possible()
}

// opponentWinningCells returns the empty cells that would make four for the
// opponent, playable or not.
func (p *Position) opponentWinningCells() uint64 {
	return p.board.winningCells(p.current^p.mask, p.mask)
}

// nonLosingMoves returns the playable cells that do not let the opponent
// make four on the next move: if the opponent has a playable four the move
// must block it (none when there are two), and a cell directly under an
// opponent's four is never played. Precondition: the player to move cannot
// win at once.
func (p *Position) nonLosingMoves() uint64 {
	return p.nonLosingMovesGiven(p.opponentWinningCells())
}

// nonLosingMovesGiven is nonLosingMoves given the opponent's winning cells.
func (p *Position) nonLosingMovesGiven(threats uint64) uint64 {
	return p.board.nonLosingMoves(p.mask, threats)
}

// nonLosingMoves is Position.nonLosingMoves of the position with stones
// mask whose opponent's winning cells are threats.
func (b *Board) nonLosingMoves(mask, threats uint64) uint64 {
	possible := (mask + b.bottom) & b.full
	if forced := possible & threats; forced != 0 {
		if forced&(forced-1) != 0 {
			return 0 // two playable fours: one of them will be made
		}
		possible = forced
	}
	return possible &^ (threats >> 1)
}

// String draws the board, top row first, X for the player to move and O for
// the opponent, with the column numbers underneath; for test failures.
func (p Position) String() string {
	b := p.board
	var s strings.Builder
	for r := b.height - 1; r >= 0; r-- {
		for c := 0; c < b.width; c++ {
			cell := uint64(1) << (uint(c)*b.stride + uint(r))
			switch {
			case p.current&cell != 0:
				s.WriteString(" X")
			case p.mask&cell != 0:
				s.WriteString(" O")
			default:
				s.WriteString(" .")
			}
		}
		s.WriteByte('\n')
	}
	for c := 1; c <= b.width; c++ {
		fmt.Fprintf(&s, " %d", c)
	}
	fmt.Fprintf(&s, "\n%d moves, X to move\n", p.moves)
	return s.String()
}
