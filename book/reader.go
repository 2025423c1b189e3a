package book

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// Reader looks up many positions faster than Book.Get: it keeps one
// Pebble iterator and seeks it to each position, where Get sets up a new
// one for every lookup. It sees the book as it was when the Reader was
// made, and pins the files of that state until Close: it is for a batch of
// lookups, not for a long-lived handle on a book being written. A Reader
// is not safe for concurrent use; make one per goroutine.
type Reader struct {
	book   *Book
	it     *pebble.Iterator // nil for a packed book, which needs none
	key    [positionKeyLen]byte
	closed bool
}

// NewReader returns a Reader of the book's positions. Close it when done.
func (b *Book) NewReader() (*Reader, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	if b.pk != nil {
		return &Reader{book: b}, nil
	}
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: []byte{0}, UpperBound: []byte{maxDepth + 1}})
	if err != nil {
		return nil, err
	}
	return &Reader{book: b, it: it}, nil
}

// GetEntry returns the value stored under a depth and canonical key and
// whether the book holds it, as Book.GetEntry.
func (r *Reader) GetEntry(depth int, key uint64) (Value, bool, error) {
	if r.closed {
		return Value{}, false, ErrClosed
	}
	if err := r.book.check(false); err != nil {
		return Value{}, false, err
	}
	if r.book.pk != nil {
		return r.book.packedGet(depth, key)
	}
	k := AppendKey(r.key[:0], depth, key)
	if !r.it.SeekGE(k) || !bytes.Equal(r.it.Key(), k) {
		return Value{}, false, readError(r.it.Error())
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		return Value{}, false, readError(err)
	}
	val, err := DecodeValue(k, v)
	if err != nil {
		return Value{}, false, err
	}
	return val, true, nil
}

// Close releases the iterator. Close it before the book.
func (r *Reader) Close() error {
	if r.closed {
		return ErrClosed
	}
	r.closed = true
	if r.it == nil {
		return nil
	}
	err := r.it.Close()
	r.it = nil
	return err
}
