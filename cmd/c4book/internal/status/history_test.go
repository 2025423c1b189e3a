package status

import (
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
)

func TestHistory_Trend(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 45, 0, 0, time.UTC)
	report := func(state string, done, total uint64, at time.Duration) queue.JobStatus {
		return queue.JobStatus{JobID: "5x4-d10", State: state, Done: done, Total: total, Updated: t0.Add(at)}
	}
	first := report("solving", 1000, 11000, 0)
	cases := []struct {
		name      string
		refreshes [][]queue.JobStatus
		now       time.Duration
		rate, eta string
	}{
		{"one report", [][]queue.JobStatus{{first}}, time.Second, "-", "--"},
		{"the same report twice", [][]queue.JobStatus{{first}, {first}}, 6 * time.Second, "-", "--"},
		// 2,000 positions in 10 s: 200/s; 8,000 left: 40 s.
		{"two reports", [][]queue.JobStatus{{first}, {report("solving", 3000, 11000, 10*time.Second)}}, 11 * time.Second, "200", "40s"},
		{"two reports, the second read again", [][]queue.JobStatus{{first}, {report("solving", 3000, 11000, 10*time.Second)}, {report("solving", 3000, 11000, 10*time.Second)}}, 14 * time.Second, "200", "40s"},
		{"from the two latest", [][]queue.JobStatus{{first}, {report("solving", 3000, 11000, 10*time.Second)}, {report("solving", 3500, 11000, 15*time.Second)}}, 16 * time.Second, "100", "1m15s"},
		{"nothing moved", [][]queue.JobStatus{{first}, {report("solving", 1000, 11000, 5*time.Second)}}, 6 * time.Second, "0", "-"},
		{"a new phase", [][]queue.JobStatus{{first}, {report("deriving", 10, 500, 5*time.Second)}}, 6 * time.Second, "-", "--"},
		{"planning: no total yet", [][]queue.JobStatus{{report("planning", 100, 0, 0)}, {report("planning", 600, 0, 5*time.Second)}}, 6 * time.Second, "100", "-"},
		{"all done in the phase", [][]queue.JobStatus{{first}, {report("solving", 11000, 11000, 5*time.Second)}}, 6 * time.Second, "2,000", "-"},
		{"done", [][]queue.JobStatus{{first}, {report("done", 11000, 11000, 5*time.Second)}}, 6 * time.Second, "-", "-"},
		{"stopped", [][]queue.JobStatus{{first}, {report("stopped", 3000, 11000, 5*time.Second)}}, 6 * time.Second, "-", "-"},
		{"coordinator silent for over a minute", [][]queue.JobStatus{{first}, {report("solving", 3000, 11000, 10*time.Second)}}, 2 * time.Minute, "-", "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHistory()
			for _, jobs := range c.refreshes {
				h.Add(jobs)
			}
			latest := c.refreshes[len(c.refreshes)-1][0]
			rate, eta := h.Trend(latest, t0.Add(c.now))
			if rate != c.rate || eta != c.eta {
				t.Errorf("rate %q, ETA %q; want %q, %q", rate, eta, c.rate, c.eta)
			}
		})
	}
}
