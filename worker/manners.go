package worker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// # Manners on a machine that belongs to someone
//
// A worker on a spare machine yields it to its owner: a Gate says when it
// may not work (outside its hours, or while the owner's programs keep the
// machine busy), and RunGated pauses the worker meanwhile. A pause hands
// every task back at once, as Ctrl-C does (no task waits out its AckWait
// in a paused worker's hands), says so in the log and in the worker's
// status, keeps the transposition table warm for when it resumes, and
// resumes by itself when the gate opens again.

// A Gate says whether a worker may work now.
type Gate interface {
	// Closed reports whether the worker must pause at now, and why, in
	// a few words ("outside the hours 22:00-07:00").
	Closed(now time.Time) (closed bool, why string)
}

// Gates is the Gate closed when any of its gates is: the first one's
// reason is given.
type Gates []Gate

// Closed is the first closed gate's answer.
func (g Gates) Closed(now time.Time) (bool, string) {
	for _, gate := range g {
		if closed, why := gate.Closed(now); closed {
			return true, why
		}
	}
	return false, ""
}

// Hours is a daily window of the local time in which a worker works, such
// as the night: from From to To, past midnight when To is earlier.
type Hours struct {
	From, To time.Duration // since midnight
	text     string
}

// ParseHours parses a window "HH:MM-HH:MM" (24-hour clock, local time):
// "22:00-07:00" is the night, "09:00-17:00" the day; equal ends are
// refused (say nothing to work always).
func ParseHours(s string) (Hours, error) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return Hours{}, fmt.Errorf("hours %q: want FROM-TO, such as 22:00-07:00", s)
	}
	f, err := parseClock(from)
	if err == nil {
		var t time.Duration
		if t, err = parseClock(to); err == nil {
			if f == t {
				return Hours{}, fmt.Errorf("hours %q: a window of no time (to work always, give none)", s)
			}
			return Hours{From: f, To: t, text: s}, nil
		}
	}
	return Hours{}, fmt.Errorf("hours %q: %v", s, err)
}

// parseClock parses "HH:MM" into the time since midnight.
func parseClock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM (00:00 to 23:59)", s)
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// String returns the window as it was given.
func (h Hours) String() string { return h.text }

// Contains reports whether t falls in the window (its local time of day).
func (h Hours) Contains(t time.Time) bool {
	y, mo, d := t.Date()
	day := t.Sub(time.Date(y, mo, d, 0, 0, 0, 0, t.Location()))
	if h.From < h.To {
		return day >= h.From && day < h.To
	}
	return day >= h.From || day < h.To
}

// Closed is closed outside the window.
func (h Hours) Closed(now time.Time) (bool, string) {
	if h.Contains(now) {
		return false, ""
	}
	return true, "outside the hours " + h.text
}

// gatePoll is how often RunGated asks its gate.
var gatePoll = 5 * time.Second

// tableKeeper keeps a worker's table from one run to the next of
// RunGated, warm for when it resumes.
type tableKeeper struct{ table *solver.Table }

// RunGated is Run on a machine whose owner comes first: while gate is
// closed the worker pauses (see # Manners), and it runs again when the
// gate opens; it returns when ctx is done, when the worker leaves idle
// (cfg.IdleExit, counted in a run only, not in a pause) or fails. A nil
// gate is always open.
func RunGated(ctx context.Context, tasks Tasks, pub Publisher, cfg Config, gate Gate) error {
	if gate == nil {
		return Run(ctx, tasks, pub, cfg)
	}
	cfg = cfg.withDefaults()
	cfg.keep = &tableKeeper{}
	log := cfg.Log.With("worker", cfg.ID)
	started := time.Now()
	for ctx.Err() == nil {
		if closed, why := gate.Closed(time.Now()); closed {
			log.Info("paused: tasks handed back, none taken", "why", why)
			if !waitOpen(ctx, gate, pub, cfg, started, why) {
				return nil
			}
			log.Info("resumed")
		}
		// Run until the gate closes.
		runCtx, pause := context.WithCancel(ctx)
		paused := make(chan struct{})
		watching := make(chan struct{})
		go func() {
			defer close(watching)
			t := time.NewTicker(gatePoll)
			defer t.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case now := <-t.C:
					if closed, _ := gate.Closed(now); closed {
						close(paused)
						pause()
						return
					}
				}
			}
		}()
		err := Run(runCtx, tasks, pub, cfg)
		pause()
		<-watching
		select {
		case <-paused:
			if err != nil {
				return err
			}
			continue // paused: the loop waits for the gate
		default:
		}
		return err // stopped, idle or failed
	}
	return nil
}

// waitOpen waits until gate opens, and reports true, or until ctx is
// done (false), keeping the worker's status, paused and why, in the
// status bucket meanwhile.
func waitOpen(ctx context.Context, gate Gate, pub Publisher, cfg Config, started time.Time, why string) bool {
	t := time.NewTicker(gatePoll)
	defer t.Stop()
	statusAt := time.Time{}
	for {
		now := time.Now()
		if now.Sub(statusAt) >= cfg.StatusEvery {
			statusAt = now
			c := cfg.Counters
			s := queue.WorkerStatus{WorkerID: cfg.ID, Solved: c.Solved.Load(), Nodes: c.Nodes.Load(), Tasks: c.Tasks.Load(),
				Started: started, JobID: c.LastJob(), Paused: why}
			s.Host, _ = os.Hostname()
			if err := pub.PutWorkerStatus(ctx, s); err != nil && ctx.Err() == nil {
				// No coordinator has made the bucket yet, or the link
				// is down: try again at the next poll, not a status
				// period later.
				cfg.Log.Debug("storing worker status", "error", err)
				statusAt = time.Time{}
			}
		}
		select {
		case <-ctx.Done():
			rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			_ = pub.RemoveWorkerStatus(rmCtx, cfg.ID)
			return false
		case now := <-t.C:
			closed, reason := gate.Closed(now)
			if !closed {
				return true
			}
			if reason != why {
				why = reason
				statusAt = time.Time{} // say the new reason now
			}
		}
	}
}
