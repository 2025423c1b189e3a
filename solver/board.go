package solver

import (
	"fmt"
	"math/bits"
	"slices"
)

// MaxWidth is the widest board a move string can describe: columns are
// written as single digits 1..9.
const MaxWidth = 9

// Board is the size of a Connect 4 board and the bit masks derived from it.
// A Board is immutable and shared by every Position played on it.
//
// # Bit layout
//
// A board of W columns and H rows is stored in a uint64, one run of H+1 bits
// per column: H bits for the cells, bottom first, and one sentinel bit on
// top that is always empty, so that shifts never carry from one column into
// the next. Bit index of the cell at column c, row r (both 0-based, row 0 at
// the bottom) is c*(H+1) + r. On the standard 7x6 board:
//
//	  6 13 20 27 34 41 48   <- sentinel row
//	+---------------------+
//	| 5 12 19 26 33 40 47 |
//	| 4 11 18 25 32 39 46 |
//	| 3 10 17 24 31 38 45 |
//	| 2  9 16 23 30 37 44 |
//	| 1  8 15 22 29 36 43 |
//	| 0  7 14 21 28 35 42 |
//	+---------------------+
//	  1  2  3  4  5  6  7   <- column as written in move strings
//
// A board fits when W*(H+1) <= 64, from 1x1 up to 8x7 and 9x6.
type Board struct {
	width, height int
	cells         int       // width * height
	stride        uint      // bits per column: height + 1
	bottom        uint64    // bit 0 of every column
	full          uint64    // every cell of the board, no sentinels
	sentinels     uint64    // the bit above the top cell of every column
	oddRows       uint64    // cells of rows 1, 3, 5, ... counting from 1 at the bottom
	order         []int     // columns, center first: the default move order
	centrality    [64]uint8 // per bit index: its column's, higher nearer the center, 1 at the edges
	column        [64]uint8 // per bit index: its column (see columnOf)

	// When staticBounds looks for each bound, and the lowest bounds of
	// the evens strategy and the odd threat (see there).
	roomFrom       int // stones from which a player may lack room for a four
	evensFrom      int // stones from which the evens strategy and odd threat are tried
	evensFloor     int // the lowest bound evensBound gives
	oddThreatFloor int // the lowest bound oddThreatBound gives
}

// Standard is the 7 columns by 6 rows board of the commercial game.
var Standard = MustBoard(7, 6)

// CheckSize returns an error when no board has the given width and height:
// the board is empty, wider than MaxWidth or does not fit in 64 bits.
func CheckSize(width, height int) error {
	switch {
	case width < 1 || height < 1:
		return fmt.Errorf("board %dx%d: width and height must be at least 1", width, height)
	case width > MaxWidth:
		return fmt.Errorf("board %dx%d: width must be at most %d (columns are single digits)", width, height, MaxWidth)
	case width*(height+1) > 64:
		return fmt.Errorf("board %dx%d: width*(height+1) = %d, must be at most 64", width, height, width*(height+1))
	}
	return nil
}

// NewBoard returns the board of the given width and height, or the error
// of CheckSize.
func NewBoard(width, height int) (*Board, error) {
	if err := CheckSize(width, height); err != nil {
		return nil, err
	}
	b := &Board{width: width, height: height, cells: width * height, stride: uint(height + 1)}
	column := uint64(1)<<uint(height) - 1
	for c := 0; c < width; c++ {
		shift := uint(c) * b.stride
		b.bottom |= 1 << shift
		b.sentinels |= 1 << (shift + uint(height))
		b.full |= column << shift
		for r := 0; r < height; r += 2 {
			b.oddRows |= 1 << (shift + uint(r))
		}
		for i := shift; i < shift+b.stride; i++ {
			b.column[i] = uint8(c)
		}
	}
	b.roomFrom = (b.cells + 1) / 2
	b.evensFrom = (b.cells + 2) / 3
	if height%2 == 1 {
		b.evensFrom = b.cells + 1 // never: both need an even number of rows
	}
	b.evensFloor = b.LostScore(b.cells - height + 1)     // O's four in the lowest row
	b.oddThreatFloor = b.LostScore(b.cells - height + 3) // X's threat in the third row
	// Center first, then alternately left and right of it: 3 2 4 1 5 0 6
	// on 7 columns, 4 3 5 2 6 1 7 0 on 8.
	for i := 0; i < width; i++ {
		b.order = append(b.order, width/2+(1-2*(i%2))*(i+1)/2)
		for j := uint(b.order[i]) * b.stride; j < uint(b.order[i]+1)*b.stride; j++ {
			b.centrality[j] = uint8(width - i)
		}
	}
	return b, nil
}

// MustBoard is NewBoard for sizes known to be valid; it panics otherwise.
func MustBoard(width, height int) *Board {
	b, err := NewBoard(width, height)
	if err != nil {
		panic(err)
	}
	return b
}

// Equal reports whether b and o are the same size: positions of one are
// positions of the other. Boards made apart are different values.
func (b *Board) Equal(o *Board) bool {
	return b == o || b != nil && o != nil && b.width == o.width && b.height == o.height
}

// Width is the number of columns.
func (b *Board) Width() int { return b.width }

// Height is the number of rows.
func (b *Board) Height() int { return b.height }

// Cells is the number of cells, the length of the longest game.
func (b *Board) Cells() int { return b.cells }

// KeyBits is the number of bits a position key can use: W*(H+1).
func (b *Board) KeyBits() int { return b.width * int(b.stride) }

// CenterFirst returns the columns center first, the default move order.
func (b *Board) CenterFirst() []int { return slices.Clone(b.order) }

// String returns the size as "WxH".
func (b *Board) String() string { return fmt.Sprintf("%dx%d", b.width, b.height) }

// columnMask returns the cells of column col.
func (b *Board) columnMask(col int) uint64 {
	return (uint64(1)<<uint(b.height) - 1) << (uint(col) * b.stride)
}

// bottomCell returns the lowest cell of column col.
func (b *Board) bottomCell(col int) uint64 { return 1 << (uint(col) * b.stride) }

// topCell returns the highest cell of column col.
func (b *Board) topCell(col int) uint64 {
	return 1 << (uint(b.height-1) + uint(col)*b.stride)
}

// columnOf returns the column of a single-bit mask. It looks the column
// up: the search asks for the column of every move it orders, and a
// division by the stride, a variable, took 6% of its CPU profile on
// leaves-d12.
func (b *Board) columnOf(move uint64) int {
	return int(b.column[bits.TrailingZeros64(move)&63])
}

// centralityOf returns the centrality of the column of a single-bit
// mask: higher nearer the center, 1 at the edges.
func (b *Board) centralityOf(move uint64) int {
	return int(b.centrality[bits.TrailingZeros64(move)&63])
}

// winningCells returns the empty cells that would complete a four for the
// player owning stones, given all stones in mask. The cells may be
// unplayable yet (not directly above the top stone of their column).
func (b *Board) winningCells(stones, mask uint64) uint64 {
	if b.stride == 7 {
		return fourCells7(stones) & (b.full ^ mask)
	}
	return fourCells(stones, b.stride) & (b.full ^ mask)
}

// fourCells returns the cells that complete a four of stones, empty or
// not, on a board of stride s: for each cell, the three others of a four
// through it.
func fourCells(stones uint64, s uint) uint64 {
	// Vertical: three stones directly below. Then horizontal, diagonal
	// going down to the right, diagonal going up to the right.
	return (stones<<1)&(stones<<2)&(stones<<3) |
		lineCells(stones, s) | lineCells(stones, s-1) | lineCells(stones, s+1)
}

// fourCells7 is fourCells on a board of stride 7, the standard one: with
// constant shifts it takes a third fewer instructions.
func fourCells7(stones uint64) uint64 {
	return (stones<<1)&(stones<<2)&(stones<<3) |
		lineCells(stones, 7) | lineCells(stones, 6) | lineCells(stones, 8)
}

// fourCellsOf sets cells[i] to the cells that complete a four of the
// stones cells[i], empty or not (see fourCells), for i < n.
func (b *Board) fourCellsOf(cells *[lineSlots]uint64, n int) {
	if b.stride == 7 {
		fourCells7Loop(cells, n)
		return
	}
	for i := range n {
		cells[i&(lineSlots-1)] = fourCells(cells[i&(lineSlots-1)], b.stride)
	}
}

// fourCells7Loop is fourCellsOf on a board of stride 7.
func fourCells7Loop(cells *[lineSlots]uint64, n int) {
	for i := range n {
		cells[i&(lineSlots-1)] = fourCells7(cells[i&(lineSlots-1)])
	}
}

// lineCells returns the cells that complete a four of stones along the
// direction whose neighbour is s bits away: for each cell, the three
// others of a four through it, on either side.
func lineCells(stones uint64, s uint) uint64 {
	p := (stones << s) & (stones << (2 * s))
	r := p & (stones << (3 * s)) // three on one side
	r |= p & (stones >> s)       // two on one side, one on the other
	p = (stones >> s) & (stones >> (2 * s))
	r |= p & (stones << s)
	r |= p & (stones >> (3 * s))
	return r
}

// hasFour reports whether stones contain four in a row.
func (b *Board) hasFour(stones uint64) bool {
	if b.hasLine(stones, 1) {
		return true
	}
	if s := b.stride; s == 7 { // constant shifts, as in winningCells
		return b.hasLine(stones, 7) || b.hasLine(stones, 6) || b.hasLine(stones, 8)
	} else {
		return b.hasLine(stones, s) || b.hasLine(stones, s-1) || b.hasLine(stones, s+1)
	}
}

// hasLine reports whether stones contain four in a row along the direction
// whose neighbour is s bits away.
func (b *Board) hasLine(stones uint64, s uint) bool {
	m := stones & (stones >> s)
	return m&(m>>(2*s)) != 0
}
