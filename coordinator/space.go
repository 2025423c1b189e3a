package coordinator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/c4book/c4book/book"
)

// spaceCheckEvery is how often a coordinator waiting for disk space looks
// again.
const spaceCheckEvery = 5 * time.Second

// freeSpacer is a book that tells the free space of its disk.
type freeSpacer interface {
	FreeBytes() (uint64, error)
}

// guardedBook is a book whose writes wait while its disk has less than min
// bytes free: the results stay in the queue meanwhile, and the job goes on
// once space is freed. No entry is half written: nothing is written until
// there is room.
type guardedBook struct {
	JobBook
	ctx     context.Context
	min     uint64
	log     *slog.Logger
	waiting func(bool) // called when the wait starts (true) and ends (false)
}

// PutBatch waits for room, then writes entries.
func (g *guardedBook) PutBatch(entries []book.Entry) error {
	if err := g.waitForSpace(); err != nil {
		return err
	}
	return g.JobBook.PutBatch(entries)
}

// waitForSpace returns once the book's disk has g.min bytes free, or ctx's
// error.
func (g *guardedBook) waitForSpace() error {
	fs, ok := g.JobBook.(freeSpacer)
	if !ok || g.min == 0 {
		return nil
	}
	var since time.Time
	var lastLog time.Time
	for {
		free, err := fs.FreeBytes()
		if err != nil {
			return fmt.Errorf("free space of the book's disk: %w", err)
		}
		if free >= g.min {
			if !since.IsZero() {
				g.log.Info("disk space is back: writing the book again", "free", free, "waited", time.Since(since).Round(time.Second))
				g.waiting(false)
			}
			return nil
		}
		if since.IsZero() {
			since = time.Now()
			g.waiting(true)
		}
		if time.Since(lastLog) >= time.Minute {
			g.log.Error("the book's disk is nearly full: results wait in the queue until space is freed",
				"free", free, "needed", g.min, "waiting", time.Since(since).Round(time.Second))
			lastLog = time.Now()
		}
		select {
		case <-g.ctx.Done():
			return g.ctx.Err()
		case <-time.After(spaceCheckEvery):
		}
	}
}
