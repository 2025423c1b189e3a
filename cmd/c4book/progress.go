package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/human"
)

// How often the progress of a job is shown: redrawn in place on a
// terminal, a plain line otherwise.
const (
	progressRedrawEvery = 250 * time.Millisecond
	progressLineEvery   = 10 * time.Second
)

// progressBarWidth is the number of cells of the bar drawn on a terminal.
const progressBarWidth = 24

// progressStalledAfter is how long a phase may go without a position done
// before its progress says so instead of showing a rate and an ETA that
// nothing backs any more. It says so sooner, after progressStillShown,
// when the ETA it would show has already passed with nothing done (the
// last tasks of a job waiting for a lost worker's AckWait: "ETA 53ms" for
// half a minute).
const (
	progressStalledAfter = time.Minute
	progressStillShown   = 10 * time.Second
)

// console owns standard error while a job runs: it shows the job's
// progress (a bar redrawn in place on a terminal with text logs, a line
// every progressLineEvery otherwise) and writes log lines without tearing
// the bar. It is an io.Writer for the logs; its methods are safe for
// concurrent use.
type console struct {
	out  io.Writer
	term bool // draw a bar
	logs logStyle

	mu        sync.Mutex
	cur       coordinator.Progress
	base      coordinator.Progress // first report of the current phase: the rate counts from it
	movedAt   time.Time            // when the count of positions done last changed
	have      bool                 // a report came
	changed   bool                 // a report came since the last draw
	drawn     bool                 // a bar is on the screen
	extraText string               // the last text of extra

	// extra, if not nil, returns text shown after the figures ("3
	// workers"); it is called every progressLineEvery.
	extra func() string

	// width, if not nil, returns the columns of the terminal (0 if not
	// known): the bar is fitted into them (see fitBar).
	width func() int

	quiet atomic.Bool // drop the messages of quietLogger's loggers
}

// newConsole returns a console writing to out, with loggers of style
// logs. It draws a bar if out is a terminal (term) and the logs are text:
// JSON lines are for programs, which a bar redrawn between them would
// garble, so with JSON logs the progress is a plain line every
// progressLineEvery.
func newConsole(out io.Writer, term bool, logs logStyle) *console {
	return &console{out: out, term: term && !logs.json, logs: logs}
}

// logger returns a logger writing through the console from log.level up:
// for the command's own messages.
func (c *console) logger() *slog.Logger {
	return slog.New(c.logs.handler(c, c.logs.level))
}

// partLogger returns a logger writing through the console from
// logStyle.partLevel up: for a part the command runs beside its own work.
func (c *console) partLogger() *slog.Logger {
	return slog.New(c.logs.handler(c, c.logs.partLevel()))
}

// quietLogger returns a logger like partLogger that writes nothing once
// quieten is called: for connections, whose closing at the end is no
// news.
func (c *console) quietLogger() *slog.Logger {
	return slog.New(c.logs.handler(quietWriter{c}, c.logs.partLevel()))
}

// quieten silences the loggers of quietLogger.
func (c *console) quieten() { c.quiet.Store(true) }

// quietWriter writes to its console until the console is quietened.
type quietWriter struct{ c *console }

func (w quietWriter) Write(p []byte) (int, error) {
	if w.c.quiet.Load() {
		return len(p), nil
	}
	return w.c.Write(p)
}

// Write writes log output p, clearing the bar first and drawing it again
// after.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	n, err := c.out.Write(p)
	c.drawLocked()
	return n, err
}

// update records where the job stands; it is the coordinator's Progress
// callback.
func (c *console) update(p coordinator.Progress) {
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

// run shows the progress until ctx is done.
func (c *console) run(ctx context.Context) {
	every := progressLineEvery
	if c.term {
		every = progressRedrawEvery
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
		if c.extra != nil && time.Since(polled) >= progressLineEvery {
			polled = time.Now()
			extra := c.extra() // may ask the server: not under the lock
			c.mu.Lock()
			c.changed = c.changed || extra != c.extraText
			c.extraText = extra
			c.mu.Unlock()
		}
		c.mu.Lock()
		if c.term {
			if c.changed || c.have && time.Since(c.movedAt) >= progressStalledAfter {
				c.clearLocked()
				c.drawLocked()
			}
		} else if c.have {
			fmt.Fprintf(c.out, "%s %s\n", time.Now().Format(time.TimeOnly), withExtra(progressLine(c.base, c.cur, time.Since(c.movedAt)), ", ", c.extraText))
		}
		c.changed = false
		c.mu.Unlock()
	}
}

// withExtra returns s followed by sep and extra, or s if extra is empty.
func withExtra(s, sep, extra string) string {
	if extra == "" {
		return s
	}
	return s + sep + extra
}

// stop removes the bar from the screen: what follows starts on a clean
// line.
func (c *console) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.have = false
}

// clearLocked erases the bar, if drawn.
func (c *console) clearLocked() {
	if c.drawn {
		io.WriteString(c.out, "\r\x1b[K")
		c.drawn = false
	}
}

// drawLocked draws the bar on a terminal, if there is progress to show.
func (c *console) drawLocked() {
	if !c.term || !c.have {
		return
	}
	w := 0
	if c.width != nil {
		w = c.width()
	}
	io.WriteString(c.out, fitBar(c.base, c.cur, time.Since(c.movedAt), c.extraText, w))
	c.drawn = true
}

// fitBar returns the bar of progressBar followed by extra, fitted into a
// terminal of width columns (0: not known, not fitted). A line as wide
// as the terminal or wider wraps, and the "\r\x1b[K" that clears the
// bar before a log line or the next draw then clears only its last row:
// the rows above stay on the screen, and log lines land amid the bar's
// remains. So the bar graph is left out when the line does not fit, and
// what still does not fit is cut, one column short of the width (a
// line filling the last column wraps on some terminals).
func fitBar(base, cur coordinator.Progress, still time.Duration, extra string, width int) string {
	line := withExtra(progressBar(base, cur, still), "  ", extra)
	if width <= 0 || utf8.RuneCountInString(line) < width {
		return line
	}
	line = withExtra(fmt.Sprintf("%-8s %s", cur.Phase, progressFigures(base, cur, still, "  ")), "  ", extra)
	if utf8.RuneCountInString(line) < width {
		return line
	}
	return string([]rune(line)[:max(width-1, 0)])
}

// progressBar returns the one-line bar of a job at cur, whose phase began
// to be reported at base and whose count last moved still ago:
//
//	solving  [=========>              ]  41.3%  11,234/27,193  842/s  ETA 19s
//
// A phase whose total is not known yet shows the count and the rate.
func progressBar(base, cur coordinator.Progress, still time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s ", cur.Phase)
	if cur.Total > 0 {
		filled := int(float64(progressBarWidth) * float64(cur.Done) / float64(cur.Total))
		filled = min(max(filled, 0), progressBarWidth)
		b.WriteByte('[')
		b.WriteString(strings.Repeat("=", filled))
		if filled < progressBarWidth {
			b.WriteByte('>')
			b.WriteString(strings.Repeat(" ", progressBarWidth-filled-1))
		}
		b.WriteString("] ")
	}
	b.WriteString(progressFigures(base, cur, still, "  "))
	return b.String()
}

// progressLine returns the plain line of a job at cur, for logs:
//
//	solving 11,234/27,193 positions (41.3%), 842/s, ETA 19s
func progressLine(base, cur coordinator.Progress, still time.Duration) string {
	return fmt.Sprintf("%s %s", cur.Phase, progressFigures(base, cur, still, ", "))
}

// progressFigures returns the count, percentage, rate and ETA of a job at
// cur, separated by sep. The rate is that of the positions done since
// base, the phase's first report, so that the positions a resumed job
// found done do not count. When the count has not moved for
// progressStalledAfter (still), or for progressStillShown and longer than
// the ETA, the rate and ETA give way to how long nothing was done.
func progressFigures(base, cur coordinator.Progress, still time.Duration, sep string) string {
	var parts []string
	count := human.Count(cur.Done) + " positions"
	if cur.Total > 0 {
		count = fmt.Sprintf("%s/%s positions (%.1f%%)", human.Count(cur.Done), human.Count(cur.Total), 100*float64(cur.Done)/float64(cur.Total))
	}
	parts = append(parts, count)
	rate := 0.0
	if dt := (cur.Elapsed - base.Elapsed).Seconds(); dt > 0 && cur.Done > base.Done {
		rate = float64(cur.Done-base.Done) / dt
	}
	left := cur.Total == 0 || cur.Done < cur.Total
	overtaken := rate > 0 && cur.Total > 0 && still >= progressStillShown &&
		still.Seconds() > float64(cur.Total-cur.Done)/rate // the ETA has passed with nothing done
	if left && (still >= progressStalledAfter || overtaken) {
		return strings.Join(append(parts, "nothing done for "+human.Span(still)), sep)
	}
	if rate > 0 {
		parts = append(parts, human.Rate(rate)+"/s")
	}
	if cur.Total > 0 && cur.Done < cur.Total {
		eta := "ETA --"
		if rate > 0 {
			eta = "ETA " + human.Span(time.Duration(float64(cur.Total-cur.Done)/rate*float64(time.Second)))
		}
		parts = append(parts, eta)
	}
	return strings.Join(parts, sep)
}
