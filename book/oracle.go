package book

import (
	"fmt"

	"github.com/c4book/c4book/solver"
)

// Lookup finds the value a book holds for a depth and canonical key: what
// an Oracle reads. *Book, *Reader and *Loaded are Lookups.
type Lookup interface {
	// GetEntry returns the value held for depth and key and whether it is
	// held.
	GetEntry(depth int, key uint64) (Value, bool, error)
}

var (
	_ Lookup = (*Book)(nil)
	_ Lookup = (*Reader)(nil)
	_ Lookup = (*Loaded)(nil)
)

// Oracle answers a solver's questions from a book (solver.Oracle): the
// exact score of a position the book holds, so that a search stops at the
// book's positions instead of searching below them. A solver asks it only
// about positions with at most Depth stones (see Attach): a lookup is paid
// at the shallow nodes of a search only, where a hit saves a whole
// subtree. An oracle of an open book (Book.NewOracle) seeks one kept
// iterator, about two microseconds a lookup; one of a book loaded into
// memory (Loaded.NewOracle) is many times faster (docs/benchmarks.md).
//
// An Oracle sees the book as it was when it was made, and is for one
// solver: it is not safe for concurrent use. Close it before the book.
type Oracle struct {
	src   Lookup
	board *solver.Board
	name  string       // the book, for messages
	close func() error // releases src, or nil
	depth int          // the deepest depth the book holds, -1 if none
	asked int64        // lookups made
	found int64        // lookups that found the position
	err   error        // the first lookup error
}

var _ solver.Oracle = (*Oracle)(nil)

// NewOracle returns an oracle of the book's positions.
func (b *Book) NewOracle() (*Oracle, error) {
	_, hi, ok, err := b.DepthRange()
	if err != nil {
		return nil, fmt.Errorf("book %s: %w", b.path, err)
	}
	r, err := b.NewReader()
	if err != nil {
		return nil, fmt.Errorf("book %s: %w", b.path, err)
	}
	o := &Oracle{src: r, board: b.board, name: "book " + b.path, close: r.Close, depth: -1}
	if ok {
		o.depth = hi
	}
	return o, nil
}

// NewOracle returns an oracle of the loaded positions. Any number of
// oracles, one a solver, can share one Loaded.
func (l *Loaded) NewOracle() *Oracle {
	return &Oracle{src: l, board: l.board, name: "loaded book", depth: l.depth}
}

// Attach makes s ask o about every position with at most Depth stones. s
// must be of the book's board.
func (o *Oracle) Attach(s *solver.Solver) error {
	if !o.board.Equal(s.Board()) {
		return fmt.Errorf("%w: a solver of board %v, a book of %v", ErrBoardMismatch, s.Board(), o.board)
	}
	if o.depth >= 0 {
		s.SetOracle(o, o.depth)
	}
	return nil
}

// Depth returns the deepest depth the book holds, or -1 if it holds no
// position.
func (o *Oracle) Depth() int { return o.depth }

// Score returns the book's score of p and true, or false if the book does
// not hold p. A lookup error is kept (see Err) and answered as "not held":
// the search stays correct, only slower.
func (o *Oracle) Score(p *solver.Position) (int, bool) {
	o.asked++
	v, ok, err := o.src.GetEntry(p.Moves(), p.CanonicalKey())
	if err != nil {
		if o.err == nil {
			o.err = fmt.Errorf("%s: %w", o.name, err)
		}
		return 0, false
	}
	if ok {
		o.found++
	}
	return v.Score, ok
}

// Lookups returns the number of positions asked about and of those found.
func (o *Oracle) Lookups() (asked, found int64) { return o.asked, o.found }

// Err returns the first lookup error, or nil. A nil *Oracle has none.
func (o *Oracle) Err() error {
	if o == nil {
		return nil
	}
	return o.err
}

// Close releases the oracle's reader of the book, if it has one. A nil
// *Oracle has nothing to close.
func (o *Oracle) Close() error {
	if o == nil || o.close == nil {
		return nil
	}
	return o.close()
}
