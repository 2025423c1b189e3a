// Package console is standard error while a command runs: the progress
// bar of a job and the loggers that write through it, in the format and
// level of log.format and log.level, and what a command asks of a
// terminal.
package console

import (
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/config"
)

// Style is how a command logs: the format and the level of log.format
// and log.level.
type Style struct {
	json  bool       // one JSON object a line; key=value text otherwise
	level slog.Level // the least level of the command's own messages
}

// NewStyle returns the style that l, checked by config.Validate, sets.
func NewStyle(l config.Log) Style {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		panic(err) // config.LogLevels holds slog's level names
	}
	return Style{json: l.Format == "json", level: level}
}

// PartLevel returns the least level of the messages of the parts a command
// runs beside its own work (the NATS client and server, generate's local
// worker), whose information is for debugging: warn, or log.level when it
// is debug or above warn.
func (s Style) PartLevel() slog.Level {
	if s.level <= slog.LevelDebug {
		return s.level
	}
	return max(s.level, slog.LevelWarn)
}

// handler returns a handler writing the records from level up to w, one
// line (one Write) each. Text lines carry the time of day; JSON lines the
// full time.
func (s Style) handler(w io.Writer, level slog.Level) slog.Handler {
	if s.json {
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	}
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: shortTime})
}

// shortTime writes the time of a log record as hours, minutes and seconds.
func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.String(slog.TimeKey, a.Value.Time().Format(time.TimeOnly))
	}
	return a
}

// Console is standard error while a command runs: a progress.Console,
// which shows a job's progress, and the loggers that write through it
// without tearing its bar. Its methods are safe for concurrent use.
type Console struct {
	*progress.Console
	logs  Style
	quiet atomic.Bool // drop the messages of QuietLogger's loggers
}

// New returns a console writing to out, with loggers of style
// logs. It draws a bar if out is a terminal (term) and the logs are text:
// JSON lines are for programs, which a bar redrawn between them would
// garble, so with JSON logs the progress is a plain line every ten
// seconds.
func New(out io.Writer, term bool, logs Style) *Console {
	return &Console{Console: progress.NewConsole(out, term && !logs.json), logs: logs}
}

// Logger returns a logger writing through the console from log.level up:
// for the command's own messages.
func (c *Console) Logger() *slog.Logger {
	return slog.New(c.logs.handler(c, c.logs.level))
}

// PartLogger returns a logger writing through the console from
// Style.PartLevel up: for a part the command runs beside its own work.
func (c *Console) PartLogger() *slog.Logger {
	return slog.New(c.logs.handler(c, c.logs.PartLevel()))
}

// QuietLogger returns a logger like PartLogger that writes nothing once
// Quieten is called: for connections, whose closing at the end is no
// news.
func (c *Console) QuietLogger() *slog.Logger {
	return slog.New(c.logs.handler(quietWriter{c}, c.logs.PartLevel()))
}

// Quieten silences the loggers of QuietLogger.
func (c *Console) Quieten() { c.quiet.Store(true) }

// quietWriter writes to its console until the console is quietened.
type quietWriter struct{ c *Console }

func (w quietWriter) Write(p []byte) (int, error) {
	if w.c.quiet.Load() {
		return len(p), nil
	}
	return w.c.Write(p)
}

// IsTerminal reports whether stream, a standard stream, is a terminal.
func IsTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth returns a function giving the columns of stream, a
// terminal, or 0 when they cannot be read. It asks each time: the
// window may be resized while a job runs.
func TerminalWidth(stream any) func() int {
	return func() int {
		f, ok := stream.(*os.File)
		if !ok {
			return 0
		}
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return w
	}
}
