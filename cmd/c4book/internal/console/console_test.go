package console

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
)

func TestLogStyle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		level       string
		own, of     slog.Level // the command's own level, and that of its parts
		description string
	}{
		{"debug", slog.LevelDebug, slog.LevelDebug, "everything of every part"},
		{"info", slog.LevelInfo, slog.LevelWarn, "the parts' warnings and errors only"},
		{"warn", slog.LevelWarn, slog.LevelWarn, "warnings and errors"},
		{"error", slog.LevelError, slog.LevelError, "errors only"},
	}
	for _, c := range cases {
		t.Run(c.level, func(t *testing.T) {
			s := NewStyle(config.Log{Format: "text", Level: c.level})
			if s.level != c.own || s.PartLevel() != c.of {
				t.Errorf("level %v, parts %v; want %v, %v (%s)", s.level, s.PartLevel(), c.own, c.of, c.description)
			}
		})
	}
	if !NewStyle(config.Log{Format: "json", Level: "info"}).json || NewStyle(config.Log{Format: "text", Level: "info"}).json {
		t.Error("log.format json does not make JSON logs, or text does")
	}
}

func TestConsole_Write(t *testing.T) {
	t.Run("terminal: a log line clears the bar and draws it again", func(t *testing.T) {
		var out strings.Builder
		c := New(&out, true, Style{})
		c.Logger().Info("before any progress")
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.Logger().Info("planned")
		c.Stop()
		got := out.String()
		bar := progress.Bar(coordinator.Progress{Phase: book.JobPlanning, Done: 10}, coordinator.Progress{Phase: book.JobPlanning, Done: 10}, 0)
		if strings.Count(got, bar) != 1 || !strings.HasSuffix(got, bar+"\r\x1b[K") || strings.Contains(got, "\x1b[K\r\x1b[K") {
			t.Errorf("got %q", got)
		}
		if !strings.Contains(got, "msg=planned") || !strings.Contains(got, "msg=\"before any progress\"") {
			t.Errorf("log lines missing: %q", got)
		}
	})
	t.Run("terminal narrower than the bar: each bar fits in one row", func(t *testing.T) {
		// A bar that wraps is cleared only from its last row: the rows
		// above stay, and the log lines written after come amid them.
		var out strings.Builder
		c := New(&out, true, Style{})
		c.Width = func() int { return 60 }
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 535040, Total: 537392, Elapsed: 30 * time.Second})
		c.Logger().Info("tasks published")
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 536040, Total: 537392, Elapsed: 31 * time.Second})
		c.Logger().Info("deriving")
		c.Stop()
		bars := 0
		for _, row := range strings.FieldsFunc(out.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
			row = strings.TrimPrefix(row, "\x1b[K")
			if !strings.HasPrefix(row, "solving") {
				continue
			}
			bars++
			if n := utf8.RuneCountInString(row); n >= 60 {
				t.Errorf("a bar of %d columns on a terminal of 60: %q", n, row)
			}
		}
		if bars != 2 {
			t.Errorf("%d bars drawn, want 2: %q", bars, out.String())
		}
	})
	t.Run("not a terminal: no bar", func(t *testing.T) {
		var out strings.Builder
		c := New(&out, false, Style{})
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.Logger().Info("planned")
		c.Stop()
		if got := out.String(); strings.Contains(got, "\r") || strings.Contains(got, "[") || !strings.Contains(got, "msg=planned") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("terminal with JSON logs: no bar, every log line an object", func(t *testing.T) {
		var out strings.Builder
		c := New(&out, true, Style{json: true})
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.Logger().Info("planned", "positions", 10)
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 3, Total: 8})
		c.Logger().Warn("slow")
		c.Stop()
		got := out.String()
		if strings.Contains(got, "\r") || strings.Contains(got, "\x1b") {
			t.Errorf("a bar was drawn: %q", got)
		}
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("got %d lines, want 2: %q", len(lines), got)
		}
		for _, l := range lines {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Errorf("not a JSON object: %q: %v", l, err)
			}
		}
	})
	t.Run("quietened", func(t *testing.T) {
		var out strings.Builder
		c := New(&out, false, Style{})
		c.QuietLogger().Warn("shown")
		c.Quieten()
		c.QuietLogger().Warn("dropped")
		c.Logger().Info("still shown")
		got := out.String()
		if !strings.Contains(got, "shown") || strings.Contains(got, "dropped") || !strings.Contains(got, "still shown") {
			t.Errorf("got %q", got)
		}
	})
}
