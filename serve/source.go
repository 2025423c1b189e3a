package serve

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/book"
)

// source is one open state of the book being served: the book itself, or
// the newest snapshot of a book a job is writing. A server replaces its
// source when a newer snapshot appears; requests and solvers hold the one
// they started with until they are done, and the last to let go of a
// replaced source closes it.
type source struct {
	book     *book.Book
	depth    int       // deepest depth held, -1 for an empty book
	snapshot time.Time // when the snapshot was taken; zero for the book itself
	opened   time.Time

	// refs counts the server's own hold (while current) and one per user;
	// at 0 the book is closed and the source must not be used.
	refs atomic.Int64

	statsOnce sync.Once
	stats     chan struct{} // closed when bookStats is set
	bookStats book.Stats
	statsErr  error
}

// newSource returns a source of bk, held once by its server.
func newSource(bk *book.Book, now time.Time) (*source, error) {
	_, hi, ok, err := bk.DepthRange()
	if err != nil {
		return nil, err
	}
	src := &source{book: bk, depth: -1, opened: now, stats: make(chan struct{})}
	if ok {
		src.depth = hi
	}
	if t, ok := bk.SnapshotTime(); ok {
		src.snapshot = t
	}
	src.refs.Store(1)
	return src, nil
}

// tryAcquire adds a user of src, unless src is already closed.
func (src *source) tryAcquire() bool {
	for {
		n := src.refs.Load()
		if n == 0 {
			return false
		}
		if src.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release lets go of src; the last release closes its book.
func (src *source) release() {
	if src.refs.Add(-1) == 0 {
		src.book.Close()
	}
}

// countStats counts the book's entries once, in the background: a big
// book takes a while to read.
func (src *source) countStats() {
	src.statsOnce.Do(func() {
		if !src.tryAcquire() {
			close(src.stats)
			return
		}
		go func() {
			defer src.release()
			src.bookStats, src.statsErr = src.book.Stats()
			close(src.stats)
		}()
	})
}
