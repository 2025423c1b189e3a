package book

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/c4book/c4book/solver"
)

// EntryOf returns the entry of position p with value v: p's depth and
// canonical key.
func EntryOf(p solver.Position, v Value) Entry {
	return Entry{Depth: p.Moves(), Key: p.CanonicalKey(), Value: v}
}

// Get returns the value of position p (or of its mirror image) and whether
// the book holds it. A stored value that cannot be decoded is a
// *CorruptError naming its key.
func (b *Book) Get(p solver.Position) (Value, bool, error) {
	if err := b.checkBoard(p.Board()); err != nil {
		return Value{}, false, err
	}
	return b.get(p.Moves(), p.CanonicalKey())
}

// GetMoves returns the value of the position reached by a move string (see
// solver.Board.Parse) and whether the book holds it.
func (b *Book) GetMoves(moves string) (Value, bool, error) {
	p, err := b.board.Parse(moves)
	if err != nil {
		return Value{}, false, err
	}
	return b.get(p.Moves(), p.CanonicalKey())
}

// GetEntry returns the value stored under a depth and canonical key and
// whether the book holds it.
func (b *Book) GetEntry(depth int, key uint64) (Value, bool, error) {
	return b.get(depth, key)
}

// get looks up one position key.
func (b *Book) get(depth int, key uint64) (Value, bool, error) {
	if err := b.check(false); err != nil {
		return Value{}, false, err
	}
	if b.pk != nil {
		return b.packedGet(depth, key)
	}
	var buf [positionKeyLen]byte
	k := AppendKey(buf[:0], depth, key)
	v, closer, err := b.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return Value{}, false, nil
	}
	if err != nil {
		return Value{}, false, readError(err)
	}
	val, err := DecodeValue(k, v)
	closer.Close()
	if err != nil {
		return Value{}, false, err
	}
	return val, true, nil
}

// Put stores the value of position p, synced. To store many positions use
// a Batch or PutBatch: each synced write costs a disk flush.
func (b *Book) Put(p solver.Position, v Value) error {
	return b.PutBatch([]Entry{EntryOf(p, v)})
}

// PutBatch stores entries in one synced batch: after a crash either all of
// them are in the book or none is. An entry that is not valid for the
// book's board (see Batch.Put) fails the whole batch.
func (b *Book) PutBatch(entries []Entry) error {
	batch := b.NewBatch()
	defer batch.Close()
	for _, e := range entries {
		if err := batch.Put(e); err != nil {
			return err
		}
	}
	return batch.Commit()
}

// Batch collects entries to write together. Commit writes them in one
// synced, atomic batch: after a crash either all of them are in the book or
// none is. A Batch is not safe for concurrent use.
type Batch struct {
	book  *Book
	batch *pebble.Batch
	n     int
	key   [positionKeyLen]byte
	val   [maxValueLen]byte
}

// NewBatch returns an empty batch of writes to b.
func (b *Book) NewBatch() *Batch {
	return &Batch{book: b, batch: b.db.NewBatch()}
}

// Put adds an entry to the batch. It returns an error, and adds nothing,
// if the entry does not fit the book's board: a depth above the number of
// cells, a key that is not the canonical key of a position of that depth,
// a score outside the range possible at that depth (see
// solver.Board.ScoreRange) or an invalid origin.
func (w *Batch) Put(e Entry) error {
	if err := w.book.check(true); err != nil {
		return err
	}
	if err := w.book.validEntry(e); err != nil {
		return err
	}
	val, err := AppendValue(w.val[:0], e.Value)
	if err != nil {
		return fmt.Errorf("%v: %w", e, err)
	}
	if err := w.batch.Set(AppendKey(w.key[:0], e.Depth, e.Key), val, nil); err != nil {
		return err
	}
	w.n++
	return nil
}

// PutPosition adds the value of position p to the batch.
func (w *Batch) PutPosition(p solver.Position, v Value) error {
	if err := w.book.checkBoard(p.Board()); err != nil {
		return err
	}
	return w.Put(EntryOf(p, v))
}

// Len returns the number of entries added since the batch was made or last
// committed.
func (w *Batch) Len() int { return w.n }

// Commit writes the batch, synced, and empties it for reuse.
func (w *Batch) Commit() error {
	if err := w.book.check(true); err != nil {
		return err
	}
	if w.n == 0 {
		return nil
	}
	if err := w.batch.Commit(pebble.Sync); err != nil {
		return err
	}
	w.batch.Reset()
	w.n = 0
	return nil
}

// Close discards what the batch holds and releases it. Close after Commit
// only releases it.
func (w *Batch) Close() error {
	w.n = 0
	return w.batch.Close()
}

// checkBoard returns an error if board is not the size of the book's.
func (b *Book) checkBoard(board *solver.Board) error {
	if !b.board.Equal(board) {
		return fmt.Errorf("%w: position of board %v in a book of %v", ErrBoardMismatch, board, b.board)
	}
	return nil
}

// validEntry checks that e can be an entry of the book: see Batch.Put.
func (b *Book) validEntry(e Entry) error {
	if _, err := b.entryPosition(e.Depth, e.Key); err != nil {
		return err
	}
	if lo, hi := scoreBounds(b.board, e.Depth); e.Score < lo || e.Score > hi {
		return fmt.Errorf("%v: score outside [%d, %d], the range at depth %d", e, lo, hi, e.Depth)
	}
	if !e.Origin.Valid() {
		return fmt.Errorf("%v: invalid origin", e)
	}
	return nil
}

// entryPosition returns the position of a depth and canonical key, or an
// error if they are not those of a position of the book's board.
func (b *Book) entryPosition(depth int, key uint64) (solver.Position, error) {
	return KeyPosition(b.board, depth, key)
}

// KeyPosition returns the position of board b with the canonical key key,
// checked to be a position of depth stones: the checks of every entry read
// from a book or a file (package bookfile). The error names the depth and
// the key.
func KeyPosition(b *solver.Board, depth int, key uint64) (solver.Position, error) {
	if depth < 0 || depth > b.Cells() {
		return solver.Position{}, fmt.Errorf("depth %d key %#x: depth outside [0, %d]", depth, key, b.Cells())
	}
	p, err := b.PositionFromKey(key)
	if err != nil {
		return solver.Position{}, fmt.Errorf("depth %d: %w", depth, err)
	}
	if p.Moves() != depth {
		return solver.Position{}, fmt.Errorf("depth %d key %#x: the key has %d stones", depth, key, p.Moves())
	}
	if c := p.CanonicalKey(); c != key {
		return solver.Position{}, fmt.Errorf("depth %d key %#x: not canonical, the mirror key %#x is smaller", depth, key, c)
	}
	return p, nil
}

// scoreBounds returns the lowest and highest score a position of depth
// stones can have, from a loss to the opponent's next stone to a win with
// the next stone (solver.Board.ScoreRange). A book holds no position whose
// game is over.
func scoreBounds(b *solver.Board, depth int) (lo, hi int) {
	return b.ScoreRange(depth)
}
