package solver

// line is a position the search looks at: a move of the node being
// searched, followed by the forced moves that come after it (see settle).
// The table key and entry of the position are kept once probed, so that a
// child probed by its parent is not probed again.
//
// A line holds its position as Position's fields without the board, so
// that the lines of a search, kept by the Solver for each number of
// stones, hold no pointer: the search writes them at every node, without
// clearing them first and without the garbage collector's write barriers.
type line struct {
	current, mask uint64 // the position p, as in Position
	moves         int
	move          uint64     // the move, a cell of the node searched
	mine          uint64     // the threats of the node's player after the move
	threats       uint64     // the threats of the opponent of p's player to move
	next          uint64     // the moves of p that do not let the opponent make four
	key           uint64     // table key of p
	bucket        uint64     // the index of key's bucket in the table (see Table.bucket)
	entry         tableEntry // p's table entry when probed
	flo, fhi      int8       // facts on p's value from settleStatic, seen by its player to move
	flipped       bool       // an odd number of forced moves were played
	expanded      bool       // mine and next are set (see expand)
	keyed         bool       // key, bucket and mirrored are set
	probed        bool       // entry is set too
	mirrored      bool       // key is the key of p's mirror image
}

// lineRow holds the lines of one node, one for each of its moves. It has
// a power of two of them, at least MaxWidth, so that the search indexes it
// through a mask (at) and the compiler checks no bounds: bounds checks
// were 3% of the search's instructions.
type lineRow [lineSlots]line

// lineSlots is the length of a lineRow.
const lineSlots = 16

// at returns the line at index i, i < lineSlots.
func (r *lineRow) at(i int) *line { return &r[i&(lineSlots-1)] }

// position returns the line's position on board b.
func (n *line) position(b *Board) Position {
	return Position{board: b, current: n.current, mask: n.mask, moves: n.moves}
}

// setPosition makes p the line's position.
func (n *line) setPosition(p *Position) { n.current, n.mask, n.moves = p.current, p.mask, p.moves }
