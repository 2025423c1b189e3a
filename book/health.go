package book

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// writeHealth keeps the latest background error of a book's Pebble
// database: a flush or compaction that failed, as on a full or unwritable
// disk. Pebble retries them; meanwhile writes stall once the memtables are
// full, and resume when the disk takes data again.
type writeHealth struct {
	logger pebble.Logger

	mu       sync.Mutex
	err      error
	at       time.Time
	logged   time.Time // when an error was last logged
	repeated int       // errors since then, not logged
}

// logEvery is the least time between two background errors logged.
const logEvery = 10 * time.Second

// backgroundError records err, and logs it unless one was logged less than
// logEvery ago: a full disk makes Pebble fail many times a second.
func (h *writeHealth) backgroundError(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.err, h.at = err, now
	if now.Sub(h.logged) < logEvery {
		h.repeated++
		return
	}
	if h.repeated > 0 {
		h.logger.Errorf("book: background error (and %d more since the last report): %v", h.repeated, err)
	} else {
		h.logger.Errorf("book: background error: %v", err)
	}
	h.logged, h.repeated = now, 0
}

// WriteError returns the latest background error of the book's database
// (a flush or compaction that failed: a full or unwritable disk) and when
// it happened, or nil. While such errors recur, writes may stall: they
// wait, and complete once the disk takes data again.
func (b *Book) WriteError() (error, time.Time) {
	h := b.health
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err, h.at
}

// FreeBytes returns the bytes free for the book on its disk. Pebble cannot
// go on once its log cannot be written (it stops the process), so a writer
// should stop writing well before the disk is full: see the coordinator's
// MinFreeBytes.
func (b *Book) FreeBytes() (uint64, error) {
	u, err := b.fs.GetDiskUsage(b.path)
	if err != nil {
		return 0, err
	}
	return u.AvailBytes, nil
}
