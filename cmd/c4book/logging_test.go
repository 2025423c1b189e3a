package main

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
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
			s := newLogStyle(config.Log{Format: "text", Level: c.level})
			if s.level != c.own || s.partLevel() != c.of {
				t.Errorf("level %v, parts %v; want %v, %v (%s)", s.level, s.partLevel(), c.own, c.of, c.description)
			}
		})
	}
	if !newLogStyle(config.Log{Format: "json", Level: "info"}).json || newLogStyle(config.Log{Format: "text", Level: "info"}).json {
		t.Error("log.format json does not make JSON logs, or text does")
	}
}

func TestRun_logFlags(t *testing.T) {
	isolateEnv(t)
	t.Run("bad level", func(t *testing.T) {
		r := run(t, "", "solve", "--log-level=verbose", "4")
		wantErr(t, r, `log.level: "verbose" is not a log level: must be one of debug, info, warn, error`, "--log-level")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("bad format from the environment", func(t *testing.T) {
		t.Setenv("C4BOOK_LOG_FORMAT", "xml")
		wantErr(t, run(t, "", "solve", "4"), `log.format: "xml" is not a log format: must be text or json`, "C4BOOK_LOG_FORMAT")
	})
	t.Run("in --help", func(t *testing.T) {
		r := run(t, "", "worker", "--help")
		wantOK(t, r)
		for _, want := range []string{"--log-format FORMAT", "text or json (log.format)", "--log-level LEVEL", "debug, info, warn, error (log.level)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("worker --help does not mention %q:\n%s", want, r.stdout)
			}
		}
	})

	// A small job: its coordinator logs at info, its local worker at
	// debug and info.
	generate := func(t *testing.T, more ...string) result {
		t.Helper()
		args := []string{"generate", "--width=5", "--height=4", "--depth=6", "--book", filepath.Join(t.TempDir(), "5x4.db"), "--workers=1", testTTSize}
		r := run(t, "", append(args, more...)...)
		wantOK(t, r)
		return r
	}
	t.Run("json", func(t *testing.T) {
		r := generate(t, "--log-format=json")
		msgs := map[string]bool{}
		for _, line := range outputLines(r.stderr) {
			var rec struct {
				Time, Level, Msg, Role string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("a line of standard error is not a JSON object: %q: %v", line, err)
				continue
			}
			if rec.Time == "" || rec.Level == "" {
				t.Errorf("a JSON line without time or level: %q", line)
			}
			msgs[rec.Role+": "+rec.Msg] = true
		}
		if !msgs["coordinator: planning"] || !msgs["coordinator: job complete"] {
			t.Errorf("the coordinator's messages are missing: %v\nstderr:\n%s", msgs, r.stderr)
		}
	})
	t.Run("default: the local worker's information is not shown", func(t *testing.T) {
		r := generate(t)
		if !strings.Contains(r.stderr, "level=INFO msg=planning role=coordinator") || strings.Contains(r.stderr, "role=worker") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
	})
	t.Run("warn", func(t *testing.T) {
		r := generate(t, "--log-level=warn")
		if strings.Contains(r.stderr, "level=INFO") {
			t.Errorf("information logged at --log-level warn:\n%s", r.stderr)
		}
	})
	t.Run("debug: the local worker's messages too", func(t *testing.T) {
		r := generate(t, "--log-level=debug")
		if !strings.Contains(r.stderr, `level=INFO msg="worker stopped" role=worker`) {
			t.Errorf("the local worker's messages are not shown at --log-level debug:\n%s", r.stderr)
		}
	})
}

func TestConsole_Write(t *testing.T) {
	t.Run("terminal: a log line clears the bar and draws it again", func(t *testing.T) {
		var out strings.Builder
		c := newConsole(&out, true, logStyle{})
		c.logger().Info("before any progress")
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned")
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
		c := newConsole(&out, true, logStyle{})
		c.Width = func() int { return 60 }
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 535040, Total: 537392, Elapsed: 30 * time.Second})
		c.logger().Info("tasks published")
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 536040, Total: 537392, Elapsed: 31 * time.Second})
		c.logger().Info("deriving")
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
		c := newConsole(&out, false, logStyle{})
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned")
		c.Stop()
		if got := out.String(); strings.Contains(got, "\r") || strings.Contains(got, "[") || !strings.Contains(got, "msg=planned") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("terminal with JSON logs: no bar, every log line an object", func(t *testing.T) {
		var out strings.Builder
		c := newConsole(&out, true, logStyle{json: true})
		c.Update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned", "positions", 10)
		c.Update(coordinator.Progress{Phase: book.JobSolving, Done: 3, Total: 8})
		c.logger().Warn("slow")
		c.Stop()
		got := out.String()
		if strings.Contains(got, "\r") || strings.Contains(got, "\x1b") {
			t.Errorf("a bar was drawn: %q", got)
		}
		lines := outputLines(got)
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
		c := newConsole(&out, false, logStyle{})
		c.quietLogger().Warn("shown")
		c.quieten()
		c.quietLogger().Warn("dropped")
		c.logger().Info("still shown")
		got := out.String()
		if !strings.Contains(got, "shown") || strings.Contains(got, "dropped") || !strings.Contains(got, "still shown") {
			t.Errorf("got %q", got)
		}
	})
}
