package book

import (
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// writeHealth logs the background errors of a book's Pebble database: a
// flush or compaction that failed, as on a full or unwritable disk. Pebble
// retries them, many times a second; meanwhile writes stall once the
// memtables are full, and resume when the disk takes data again.
type writeHealth struct {
	logger pebble.Logger

	mu       sync.Mutex
	logged   time.Time // when an error was last logged
	repeated int       // errors since then, not logged
}

// logEvery is the least time between two background errors logged.
const logEvery = 10 * time.Second

// backgroundError logs err unless an error was logged less than logEvery
// ago, counting it then for the next report.
func (h *writeHealth) backgroundError(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
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

// FreeBytes returns the bytes free for the book on its disk. Pebble cannot
// go on once its log cannot be written (it stops the process), so a writer
// should stop writing well before the disk is full: see the coordinator's
// MinFreeBytes.
func (b *Book) FreeBytes() (uint64, error) {
	if b.pk != nil {
		return 0, fmt.Errorf("book %s: %w: a packed book is never written", b.path, ErrReadOnly)
	}
	u, err := b.fs.GetDiskUsage(b.path)
	if err != nil {
		return 0, err
	}
	return u.AvailBytes, nil
}
