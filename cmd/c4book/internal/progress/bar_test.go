package progress

import (
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
)

func TestProgressBar(t *testing.T) {
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
			if got := Bar(base, c.cur, c.still); got != c.bar {
				t.Errorf("bar\ngot  %q\nwant %q", got, c.bar)
			}
			if got := Line(base, c.cur, c.still); got != c.line {
				t.Errorf("line\ngot  %q\nwant %q", got, c.line)
			}
		})
	}
	t.Run("total not known yet", func(t *testing.T) {
		b := coordinator.Progress{Phase: book.JobDeriving}
		cur := coordinator.Progress{Phase: book.JobDeriving, Done: 12345, Elapsed: 5 * time.Second}
		if got, want := Bar(b, cur, 0), "deriving 12,345 positions  2,469/s"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestFitBar(t *testing.T) {
	base := coordinator.Progress{Phase: book.JobSolving, Elapsed: time.Second}
	cur := coordinator.Progress{Phase: book.JobSolving, Done: 535040, Total: 537392, Elapsed: 33 * time.Second}
	full := Bar(base, cur, 0) + "  3 workers"
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
		if got := FitBar(base, cur, 0, "3 workers", c.width); got != c.want {
			t.Errorf("width %d:\ngot  %q\nwant %q", c.width, got, c.want)
		}
	}
}
