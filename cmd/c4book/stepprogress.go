package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/c4book/c4book/human"
)

// stepProgress shows on w (standard error) how far a long step is: when
// the step reports (update), a line if the last one is at least every old, with the
// count, the share done, the time so far and what is left at the pace so
// far. Safe for concurrent use: the goroutines of a step may report.
type stepProgress struct {
	w           io.Writer
	what, unit  string
	every       time.Duration
	mu          sync.Mutex
	start, last time.Time
}

// newStepProgress returns the progress of a step named what, counting in
// unit, shown every at most.
func newStepProgress(w io.Writer, what, unit string, every time.Duration) *stepProgress {
	now := time.Now()
	return &stepProgress{w: w, what: what, unit: unit, every: every, start: now, last: now}
}

// update reports done of total.
func (p *stepProgress) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < p.every || total <= 0 {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	left := ""
	if done > 0 {
		left = fmt.Sprintf(", about %v left", time.Duration(float64(elapsed)*float64(total-done)/float64(done)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "%s %s of %s %s (%.1f%%) in %v%s\n", p.what, human.Count(done), human.Count(total), p.unit,
		100*float64(done)/float64(total), elapsed.Round(time.Second), left)
}
