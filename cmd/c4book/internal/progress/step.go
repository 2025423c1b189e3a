package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

// Step shows on an output (standard error) how far a long step is: when
// the step reports (Update), a line if the last one is old enough, with
// the count, the share done, the time so far and what is left at the pace
// so far. Safe for concurrent use: the goroutines of a step may report.
type Step struct {
	w           io.Writer
	what, unit  string
	every       time.Duration
	mu          sync.Mutex
	start, last time.Time
}

// NewStep returns the progress of a step named what, counting in unit,
// shown on w every at most.
func NewStep(w io.Writer, what, unit string, every time.Duration) *Step {
	now := time.Now()
	return &Step{w: w, what: what, unit: unit, every: every, start: now, last: now}
}

// Update reports done of total. A report of none done starts the clock
// again: a step that begins its work some time after its Step was made
// (book verify re-solves once it has read the book) says so, and its
// time and pace do not count the wait.
func (p *Step) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if done == 0 {
		p.start, p.last = now, now
		return
	}
	if now.Sub(p.last) < p.every || total <= 0 {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	left := ""
	if rate := Rate(done, elapsed); rate > 0 {
		left = fmt.Sprintf(", about %v left", TimeLeft(total-done, rate).Round(time.Second))
	}
	fmt.Fprintf(p.w, "%s %s of %s %s (%.1f%%) in %v%s\n", p.what, human.Count(done), human.Count(total), p.unit,
		100*float64(done)/float64(total), elapsed.Round(time.Second), left)
}
