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
	return func(yield func(Entry, error) bool) {
		err := v.scan(minDepth, maxDepth, func(k, val []byte) error {
			e, err := v.book.decodeEntry(k, val)
			if err != nil {
				return err
			}
			if !yield(e, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(Entry{}, err)
		}
	}
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
	b := v.book
	if err := b.check(false); err != nil {
		return err
	}
	minDepth = max(minDepth, 0)
	maxDepth = min(maxDepth, b.board.Cells())
	if minDepth > maxDepth {
		return nil
	}
	return scanKeys(v.snap, []byte{byte(minDepth)}, []byte{byte(maxDepth + 1)}, fn)
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
