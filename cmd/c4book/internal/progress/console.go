package progress

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/c4book/c4book/coordinator"
)

// How often the progress of a job is shown: redrawn in place on a
// terminal, a plain line otherwise.
const (
	redrawEvery = 250 * time.Millisecond
	lineEvery   = 10 * time.Second
)

// Console owns an output (standard error) while a job runs: it shows the
// job's progress, a bar redrawn in place (on a terminal) or a line every
// ten seconds, and writes log lines without tearing the bar. It is an
// io.Writer for the logs; its methods are safe for concurrent use.
type Console struct {
	// Extra, if not nil, returns text shown after the figures ("3
	// workers"); it is called every ten seconds. Set it before Run.
	Extra func() string

	// Width, if not nil, returns the columns of the terminal (0 if not
	// known): the bar is fitted into them (see FitBar). Set it before
	// Run.
	Width func() int

	out io.Writer
	bar bool // draw a bar

	mu        sync.Mutex
	cur       coordinator.Progress
	base      coordinator.Progress // first report of the current phase: the rate counts from it
	movedAt   time.Time            // when the count of positions done last changed
	have      bool                 // a report came
	changed   bool                 // a report came since the last draw
	drawn     bool                 // a bar is on the screen
	extraText string               // the last text of Extra
}

// NewConsole returns a console writing to out: a bar if bar is set (out
// is a terminal, and what is written between two bars is not for
// programs, which a bar redrawn between the lines would garble), a plain
// line every ten seconds otherwise.
func NewConsole(out io.Writer, bar bool) *Console {
	return &Console{out: out, bar: bar}
}

// Write writes log output p, clearing the bar first and drawing it again
// after.
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	n, err := c.out.Write(p)
	c.drawLocked()
	return n, err
}

// Update records where the job stands; it is the coordinator's Progress
// callback.
func (c *Console) Update(p coordinator.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.have || p.Phase != c.cur.Phase {
		c.base = p
	}
	if !c.have || p.Phase != c.cur.Phase || p.Done != c.cur.Done {
		c.movedAt = time.Now()
	}
	c.cur, c.have, c.changed = p, true, true
}

// Run shows the progress until ctx is done.
func (c *Console) Run(ctx context.Context) {
	every := lineEvery
	if c.bar {
		every = redrawEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var polled time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c.Extra != nil && time.Since(polled) >= lineEvery {
			polled = time.Now()
			extra := c.Extra() // may ask the server: not under the lock
			c.mu.Lock()
			c.changed = c.changed || extra != c.extraText
			c.extraText = extra
			c.mu.Unlock()
		}
		c.mu.Lock()
		if c.bar {
			if c.changed || c.have && time.Since(c.movedAt) >= stalledAfter {
				c.clearLocked()
				c.drawLocked()
			}
		} else if c.have {
			fmt.Fprintf(c.out, "%s %s\n", time.Now().Format(time.TimeOnly), withExtra(Line(c.base, c.cur, time.Since(c.movedAt)), ", ", c.extraText))
		}
		c.changed = false
		c.mu.Unlock()
	}
}

// Stop removes the bar from the screen: what follows starts on a clean
// line.
func (c *Console) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.have = false
}

// clearLocked erases the bar, if drawn.
func (c *Console) clearLocked() {
	if c.drawn {
		io.WriteString(c.out, "\r\x1b[K")
		c.drawn = false
	}
}

// drawLocked draws the bar on a terminal, if there is progress to show.
func (c *Console) drawLocked() {
	if !c.bar || !c.have {
		return
	}
	w := 0
	if c.Width != nil {
		w = c.Width()
	}
	io.WriteString(c.out, FitBar(c.base, c.cur, time.Since(c.movedAt), c.extraText, w))
	c.drawn = true
}
