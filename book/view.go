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
	book   *Book
	snap   *pebble.Snapshot // nil for a packed book, which never changes
	closed bool
}

// View returns a consistent read view of the book's positions. Close it
// before the book.
func (b *Book) View() (*View, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	if b.pk != nil {
		return &View{book: b}, nil
	}
	return &View{book: b, snap: b.db.NewSnapshot()}, nil
}

// Entries returns the entries of depths minDepth..maxDepth of the view, as
// Book.Entries does those of the book.
func (v *View) Entries(minDepth, maxDepth int) iter.Seq2[Entry, error] {
	if v.closed {
		return func(yield func(Entry, error) bool) { yield(Entry{}, ErrClosed) }
	}
	return v.book.entries(v.snap, minDepth, maxDepth)
}

// Count returns the number of entries of depths minDepth..maxDepth of the
// view and the depth of the deepest (0 if there is none). It reads the
// keys only: an entry whose value cannot be decoded is counted, and
// reported by Entries.
func (v *View) Count(minDepth, maxDepth int) (n int64, deepest int, err error) {
	if pk := v.book.pk; pk != nil && !v.closed {
		for _, lv := range pk.Levels() {
			if lv.Stones >= minDepth && lv.Stones <= maxDepth && lv.Positions > 0 {
				n += int64(lv.Positions)
				deepest = lv.Stones
			}
		}
		return n, deepest, nil
	}
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
	if v.closed {
		return ErrClosed
	}
	return v.book.scanIn(v.snap, minDepth, maxDepth, fn)
}

// Close releases the view's snapshot.
func (v *View) Close() error {
	if v.closed {
		return ErrClosed
	}
	v.closed = true
	if v.snap == nil {
		return nil
	}
	err := v.snap.Close()
	v.snap = nil
	return err
}
