package serve

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// source is one open state of the book being served: the book itself, or
// the newest snapshot of a book a job is writing. A server replaces its
// source when a newer snapshot appears; requests and solvers hold the one
// they started with until they are done, and the last to let go of a
// replaced source closes it.
type source struct {
	book     *book.Book
	loaded   *book.Loaded      // the book in memory, if the server loads it
	readers  chan *book.Reader // idle readers of book, when not loaded
	depth    int               // deepest depth held, -1 for an empty book
	snapshot time.Time         // when the snapshot was taken; zero for the book itself
	opened   time.Time

	// refs counts the server's own hold (while current) and one per user;
	// at 0 the book is closed and the source must not be used.
	refs atomic.Int64

	statsOnce sync.Once
	stats     chan struct{} // closed when bookStats is set
	bookStats book.Stats
	statsErr  error

	// damage is the first read of the book that found it damaged (see
	// noteRead); nil while none has.
	damage atomic.Pointer[error]
}

// lookup is what answers read: entries and the scores of moves, of the
// book in memory or through a Pebble reader.
type lookup interface {
	GetEntry(depth int, key uint64) (book.Value, bool, error)
	MoveScore(p solver.Position, col int) (book.MoveScore, bool, error)
}

// maxIdleReaders bounds the readers a source keeps for the next requests:
// a reader sets up a Pebble iterator, which costs more than a lookup.
const maxIdleReaders = 64

// newSource returns a source of bk, held once by its server; with load,
// the book is read into memory first, unless it is a packed book: read in
// place, its lookups are as fast as a loaded book's (docs/benchmarks.md),
// and loading one would only enumerate its set into memory.
func newSource(bk *book.Book, load bool, now time.Time) (*source, error) {
	_, hi, ok, err := bk.DepthRange()
	if err != nil {
		return nil, err
	}
	src := &source{book: bk, depth: -1, opened: now, stats: make(chan struct{}),
		readers: make(chan *book.Reader, maxIdleReaders)}
	if load && bk.Packed() == nil {
		if src.loaded, err = book.Load(bk); err != nil {
			return nil, err
		}
	}
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

// release lets go of src; the last release closes its readers and its
// book.
func (src *source) release() {
	if src.refs.Add(-1) != 0 {
		return
	}
	for {
		select {
		case r := <-src.readers:
			r.Close()
		default:
			src.book.Close()
			return
		}
	}
}

// lookup returns what to read src with, and the function that gives it
// back. The caller holds src.
func (src *source) lookup() (lookup, func(), error) {
	if src.loaded != nil {
		return src.loaded, func() {}, nil
	}
	var r *book.Reader
	select {
	case r = <-src.readers:
	default:
		var err error
		if r, err = src.book.NewReader(); err != nil {
			return nil, nil, err
		}
	}
	return r, func() {
		select {
		case src.readers <- r:
		default:
			r.Close()
		}
	}, nil
}

// newOracle returns an oracle of src for one solver.
func (src *source) newOracle() (*book.Oracle, error) {
	if src.loaded != nil {
		return src.loaded.NewOracle(), nil
	}
	return src.book.NewOracle()
}

// noteRead remembers err, an error of a read of src, if it says that the
// book is damaged (book.ErrCorrupt: a table whose checksums fail, an entry
// that cannot be decoded), and returns it. Such damage does not heal: the
// server reports it as its health until it moves to another state of the
// book. Other errors (a request cancelled, a solve out of time) say
// nothing of the book.
func (src *source) noteRead(err error) error {
	if errors.Is(err, book.ErrCorrupt) {
		src.damage.CompareAndSwap(nil, &err)
	}
	return err
}

// damaged returns the first read error that found the book damaged, or
// nil.
func (src *source) damaged() error {
	if p := src.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// countStats counts the book's entries once, in the background, when they
// are first asked for: a big book takes a while to read (a second or two
// for three million entries), which a server should not spend unasked.
func (src *source) countStats() {
	src.statsOnce.Do(func() {
		if !src.tryAcquire() {
			close(src.stats)
			return
		}
		go func() {
			defer src.release()
			src.bookStats, src.statsErr = src.book.StatsInBackground()
			src.noteRead(src.statsErr)
			close(src.stats)
		}()
	})
}
