package queue

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// The embedded server's log lines go to the process' log (slogAdapter),
// through a limiter: a client can make the server log a line per message
// it sends, and some clients are not trusted. A worker's key may publish
// on the task consumer's ack subjects, and each ack of a sequence past the
// stream's last makes nats-server warn "ACK sequence N past last stream
// sequence of M"; each publication on a subject a key may not use logs a
// "Publish Violation". A worker guessing ack subjects in a loop filled a
// coordinator's log with hundreds of thousands of such lines a minute.
//
// So lines are grouped by kind: the message with every run of digits
// taken as one symbol (sequences, client ids and ports differ from one
// line to the next of a kind; subjects and words do not). The first line
// of a kind is logged at once, as it is; the next ones within
// serverLogEvery are counted, and when that time is up the last of them is
// logged once with the count (repeated=N over=10s). A kind that stops
// repeating is forgotten after serverLogEvery.

// serverLogEvery is the least time between two lines of one kind, when
// ServerOptions.logEvery is zero.
const serverLogEvery = 10 * time.Second

// maxLogKinds bounds the kinds a limiter remembers (one more: otherKinds):
// a client that makes the server log lines of ever new kinds (a subject of
// its own in each) has those counted together, under one kind of their
// own.
const maxLogKinds = 256

// slogAdapter passes nats-server's log lines to a slog.Logger, through a
// limiter.
type slogAdapter struct {
	l   *slog.Logger
	lim *logLimiter
}

// newSlogAdapter returns an adapter to l, which logs at most one line of
// a kind every every.
func newSlogAdapter(l *slog.Logger, every time.Duration) slogAdapter {
	if every <= 0 {
		every = serverLogEvery
	}
	return slogAdapter{l: l, lim: newLogLimiter(every, func(level slog.Level, msg string, repeated int, over time.Duration) {
		if repeated == 0 {
			l.Log(context.Background(), level, msg)
			return
		}
		l.Log(context.Background(), level, msg, "repeated", repeated, "over", over.Round(time.Second))
	})}
}

func (a slogAdapter) log(level slog.Level, prefix, format string, v []any) {
	if !a.l.Enabled(context.Background(), level) {
		return
	}
	a.lim.log(level, prefix+fmt.Sprintf(format, v...))
}

func (a slogAdapter) Noticef(format string, v ...any) {
	a.log(slog.LevelInfo, "nats-server: ", format, v)
}
func (a slogAdapter) Warnf(format string, v ...any) {
	a.log(slog.LevelWarn, "nats-server: ", format, v)
}
func (a slogAdapter) Fatalf(format string, v ...any) {
	a.log(slog.LevelError, "nats-server: fatal: ", format, v)
}
func (a slogAdapter) Errorf(format string, v ...any) {
	a.log(slog.LevelError, "nats-server: ", format, v)
}
func (a slogAdapter) Debugf(format string, v ...any) {
	a.log(slog.LevelDebug, "nats-server: ", format, v)
}
func (a slogAdapter) Tracef(format string, v ...any) {
	a.log(slog.LevelDebug, "nats-server: ", format, v)
}

// logLimiter lets through the first line of each kind, and then one line
// of a kind every every, with the count of those held back (see above).
type logLimiter struct {
	every time.Duration
	emit  func(level slog.Level, msg string, repeated int, over time.Duration)
	// after runs f once d has passed (time.AfterFunc); tests replace it.
	after func(d time.Duration, f func())
	now   func() time.Time

	mu    sync.Mutex
	kinds map[logKey]*logKind
}

// logKey is a kind of line: its level and its message with each run of
// digits written '#'.
type logKey struct {
	level slog.Level
	shape string
}

// otherKinds is the kind of the lines counted together once maxLogKinds
// kinds are remembered.
var otherKinds = logKey{shape: "(lines of other kinds)"}

// logKind is what a limiter remembers of a kind: when its last line was
// logged, and the lines held back since.
type logKind struct {
	logged time.Time
	held   int
	last   string     // the last line held back
	level  slog.Level // its level
	timer  bool       // a flush of the held lines is pending
}

func newLogLimiter(every time.Duration, emit func(slog.Level, string, int, time.Duration)) *logLimiter {
	return &logLimiter{every: every, emit: emit, now: time.Now,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) },
		kinds: map[logKey]*logKind{}}
}

// log logs msg, or counts it if a line of its kind was logged less than
// every ago.
func (l *logLimiter) log(level slog.Level, msg string) {
	key := logKey{level, shape(msg)}
	l.mu.Lock()
	now := l.now()
	k := l.kinds[key]
	if k == nil && len(l.kinds) >= maxLogKinds {
		l.forget(now)
		if len(l.kinds) >= maxLogKinds {
			key = otherKinds
			k = l.kinds[key]
		}
	}
	if k == nil {
		l.kinds[key] = &logKind{logged: now}
		l.mu.Unlock()
		l.emit(level, msg, 0, 0)
		return
	}
	if now.Sub(k.logged) >= l.every && k.held == 0 {
		k.logged = now
		l.mu.Unlock()
		l.emit(level, msg, 0, 0)
		return
	}
	k.held++
	k.last, k.level = msg, level
	if !k.timer {
		k.timer = true
		l.after(k.logged.Add(l.every).Sub(now), func() { l.flush(key) })
	}
	l.mu.Unlock()
}

// flush logs the last line held back of kind key, with their count.
func (l *logLimiter) flush(key logKey) {
	l.mu.Lock()
	k := l.kinds[key]
	if k == nil || k.held == 0 {
		if k != nil {
			k.timer = false
		}
		l.mu.Unlock()
		return
	}
	now := l.now()
	level, msg, n, over := k.level, k.last, k.held, now.Sub(k.logged)
	k.logged, k.held, k.last, k.timer = now, 0, "", false
	l.mu.Unlock()
	l.emit(level, msg, n, over)
}

// forget drops the kinds with nothing held whose last line was logged
// every or more before now. l.mu is held.
func (l *logLimiter) forget(now time.Time) {
	for key, k := range l.kinds {
		if k.held == 0 && !k.timer && now.Sub(k.logged) >= l.every {
			delete(l.kinds, key)
		}
	}
}

// shape returns msg with each run of digits written '#'.
func shape(msg string) string {
	b := make([]byte, 0, len(msg))
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c < '0' || c > '9' {
			b = append(b, c)
			continue
		}
		b = append(b, '#')
		for i+1 < len(msg) && msg[i+1] >= '0' && msg[i+1] <= '9' {
			i++
		}
	}
	return string(b)
}
