package book

import (
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// View is a consistent read view of a book's positions: it sees the book
// as it was when View was called, whatever is written meanwhile, so that
// an export can count the entries and then write them (package bookfile).
// It pins the files of that state until Close: it is for one export, not
// a long-lived handle. A View is not safe for concurrent use.
type View struct {
	book *Book
	snap *pebble.Snapshot
}

// View returns a consistent read view of the book's positions. Close it
// before the book.
func (b *Book) View() (*View, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	return &View{book: b, snap: b.db.NewSnapshot()}, nil
}

// Entries returns the entries of depths minDepth..maxDepth of the view, as
// Book.Entries does those of the book.
func (v *View) Entries(minDepth, maxDepth int) iter.Seq2[Entry, error] {
	if v.snap == nil {
		return func(yield func(Entry, error) bool) { yield(Entry{}, ErrClosed) }
	}
	return v.book.entries(v.snap, minDepth, maxDepth)
}

// Count returns the number of entries of depths minDepth..maxDepth of the
// view and the depth of the deepest (0 if there is none). It reads the
// keys only: an entry whose value cannot be decoded is counted, and
// reported by Entries.
func (v *View) Count(minDepth, maxDepth int) (n int64, deepest int, err error) {
	err = v.scan(minDepth, maxDepth, func(k, _ []byte) error {
		depth, _, err := DecodeKey(k)
		if err != nil {
			return err
		}
		n++
		deepest = depth
		return nil
	})
	return n, deepest, err
}

// scan is Book.scan over the view's snapshot.
func (v *View) scan(minDepth, maxDepth int, fn func(k, v []byte) error) error {
	if v.snap == nil {
		return ErrClosed
	}
	return v.book.scanIn(v.snap, minDepth, maxDepth, fn)
}

// Close releases the view's snapshot.
func (v *View) Close() error {
	if v.snap == nil {
		return ErrClosed
	}
	err := v.snap.Close()
	v.snap = nil
	return err
}
