package main

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/config"
)

// logStyle is how a command logs: the format and the level of log.format
// and log.level.
type logStyle struct {
	json  bool       // one JSON object a line; key=value text otherwise
	level slog.Level // the least level of the command's own messages
}

// newLogStyle returns the style that l, checked by config.Validate, sets.
func newLogStyle(l config.Log) logStyle {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		panic(err) // config.LogLevels holds slog's level names
	}
	return logStyle{json: l.Format == "json", level: level}
}

// partLevel returns the least level of the messages of the parts a command
// runs beside its own work (the NATS client and server, generate's local
// worker), whose information is for debugging: warn, or log.level when it
// is debug or above warn.
func (s logStyle) partLevel() slog.Level {
	if s.level <= slog.LevelDebug {
		return s.level
	}
	return max(s.level, slog.LevelWarn)
}

// handler returns a handler writing the records from level up to w, one
// line (one Write) each. Text lines carry the time of day; JSON lines the
// full time.
func (s logStyle) handler(w io.Writer, level slog.Level) slog.Handler {
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

// console is standard error while a command runs: a progress.Console,
// which shows a job's progress, and the loggers that write through it
// without tearing its bar. Its methods are safe for concurrent use.
type console struct {
	*progress.Console
	logs  logStyle
	quiet atomic.Bool // drop the messages of quietLogger's loggers
}

// newConsole returns a console writing to out, with loggers of style
// logs. It draws a bar if out is a terminal (term) and the logs are text:
// JSON lines are for programs, which a bar redrawn between them would
// garble, so with JSON logs the progress is a plain line every ten
// seconds.
func newConsole(out io.Writer, term bool, logs logStyle) *console {
	return &console{Console: progress.NewConsole(out, term && !logs.json), logs: logs}
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
