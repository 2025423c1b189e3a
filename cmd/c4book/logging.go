package main

import (
	"io"
	"log/slog"
	"time"

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
