package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
)

func TestProgressBar(t *testing.T) {
	t.Parallel()
	base := coordinator.Progress{Phase: book.JobSolving, Done: 1000, Total: 4000, Elapsed: time.Second}
	cases := []struct {
		name  string
		cur   coordinator.Progress
		still time.Duration // since the count last moved
		bar   string
		line  string
	}{
		{
			"half done, resumed at a quarter",
			coordinator.Progress{Phase: book.JobSolving, Done: 2000, Total: 4000, Elapsed: 11 * time.Second}, time.Second,
			"solving  [============>           ] 2,000/4,000 positions (50.0%)  100/s  ETA 20s",
			"solving 2,000/4,000 positions (50.0%), 100/s, ETA 20s",
		},
		{
			"nothing new yet",
			base, 0,
			"solving  [======>                 ] 1,000/4,000 positions (25.0%)  ETA --",
			"solving 1,000/4,000 positions (25.0%), ETA --",
		},
		{
			"done",
			coordinator.Progress{Phase: book.JobSolving, Done: 4000, Total: 4000, Elapsed: 31 * time.Second}, 2 * time.Minute,
			"solving  [========================] 4,000/4,000 positions (100.0%)  100/s",
			"solving 4,000/4,000 positions (100.0%), 100/s",
		},
		{
			"nothing done for a while: no ETA",
			coordinator.Progress{Phase: book.JobSolving, Done: 2000, Total: 4000, Elapsed: 11 * time.Second}, 90 * time.Second,
			"solving  [============>           ] 2,000/4,000 positions (50.0%)  nothing done for 1m30s",
			"solving 2,000/4,000 positions (50.0%), nothing done for 1m30s",
		},
		{
			"the last positions, stalled past their ETA: no ETA",
			coordinator.Progress{Phase: book.JobSolving, Done: 3999, Total: 4000, Elapsed: 11 * time.Second}, 25 * time.Second,
			"solving  [=======================>] 3,999/4,000 positions (100.0%)  nothing done for 25s",
			"solving 3,999/4,000 positions (100.0%), nothing done for 25s",
		},
		{
			"nothing done for less than the ETA",
			coordinator.Progress{Phase: book.JobSolving, Done: 2000, Total: 4000, Elapsed: 11 * time.Second}, 15 * time.Second,
			"solving  [============>           ] 2,000/4,000 positions (50.0%)  100/s  ETA 20s",
			"solving 2,000/4,000 positions (50.0%), 100/s, ETA 20s",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := progressBar(base, c.cur, c.still); got != c.bar {
				t.Errorf("bar\ngot  %q\nwant %q", got, c.bar)
			}
			if got := progressLine(base, c.cur, c.still); got != c.line {
				t.Errorf("line\ngot  %q\nwant %q", got, c.line)
			}
		})
	}
	t.Run("total not known yet", func(t *testing.T) {
		b := coordinator.Progress{Phase: book.JobDeriving}
		cur := coordinator.Progress{Phase: book.JobDeriving, Done: 12345, Elapsed: 5 * time.Second}
		if got, want := progressBar(b, cur, 0), "deriving 12,345 positions  2,469/s"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestConsole_Write(t *testing.T) {
	t.Parallel()
	t.Run("terminal: a log line clears the bar and draws it again", func(t *testing.T) {
		var out strings.Builder
		c := newConsole(&out, true, logStyle{})
		c.logger().Info("before any progress")
		c.update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned")
		c.stop()
		got := out.String()
		bar := progressBar(coordinator.Progress{Phase: book.JobPlanning, Done: 10}, coordinator.Progress{Phase: book.JobPlanning, Done: 10}, 0)
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
		c.width = func() int { return 60 }
		c.update(coordinator.Progress{Phase: book.JobSolving, Done: 535040, Total: 537392, Elapsed: 30 * time.Second})
		c.logger().Info("tasks published")
		c.update(coordinator.Progress{Phase: book.JobSolving, Done: 536040, Total: 537392, Elapsed: 31 * time.Second})
		c.logger().Info("deriving")
		c.stop()
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
		c.update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned")
		c.stop()
		if got := out.String(); strings.Contains(got, "\r") || strings.Contains(got, "[") || !strings.Contains(got, "msg=planned") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("terminal with JSON logs: no bar, every log line an object", func(t *testing.T) {
		var out strings.Builder
		c := newConsole(&out, true, logStyle{json: true})
		c.update(coordinator.Progress{Phase: book.JobPlanning, Done: 10})
		c.logger().Info("planned", "positions", 10)
		c.update(coordinator.Progress{Phase: book.JobSolving, Done: 3, Total: 8})
		c.logger().Warn("slow")
		c.stop()
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

func TestFormatSpan(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		1234567 * time.Nanosecond:                    "1ms",
		4*time.Second + 270*time.Millisecond:         "4.3s",
		19*time.Second + 600*time.Millisecond:        "20s",
		4*time.Minute + 5*time.Second:                "4m05s",
		2*time.Hour + 3*time.Minute + 40*time.Second: "2h04m",
	}
	for d, want := range cases {
		if got := formatSpan(d); got != want {
			t.Errorf("formatSpan(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	t.Parallel()
	cases := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"}
	for n, want := range cases {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFitBar(t *testing.T) {
	t.Parallel()
	base := coordinator.Progress{Phase: book.JobSolving, Elapsed: time.Second}
	cur := coordinator.Progress{Phase: book.JobSolving, Done: 535040, Total: 537392, Elapsed: 33 * time.Second}
	full := progressBar(base, cur, 0) + "  3 workers"
	figures := "solving  535,040/537,392 positions (99.6%)  16,720/s  ETA 141ms  3 workers"
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, full},             // not known: as it is
		{len(full) + 1, full}, // fits
		{len(full), figures},  // would fill the last column: no graph
		{len(figures) + 1, figures},
		{40, figures[:39]}, // cut one column short
	} {
		if got := fitBar(base, cur, 0, "3 workers", c.width); got != c.want {
			t.Errorf("width %d:\ngot  %q\nwant %q", c.width, got, c.want)
		}
	}
}
