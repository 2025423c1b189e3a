package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
)

// value returns the value of the summary row labelled label, "" if none.
func value(out, label string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "  "+label+" "); ok && strings.HasPrefix(rest, " ") {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// TestWrite: the rows of cross-checks skipped and positions solved again,
// with their notes; the row of cross-checks that a lone worker could not
// make; the process's CPU when known; rows that would say none left out.
func TestWrite(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	Write(&out, coordinator.Summary{JobID: "j", CrossChecked: 3, CrossSkipped: 2, Requeued: 64}, Options{Book: "b.db"})
	got := out.String()
	if !strings.HasPrefix(got, "Job j complete: book b.db\n") || value(got, "cross-checked tasks") != "3" || value(got, "cross-checks skipped") != "2" ||
		value(got, "solved again") != "64" || !strings.Contains(got, "(tasks no other worker came to check") ||
		!strings.Contains(got, "(positions of workers quarantined") || strings.Contains(got, "cpu time") || strings.Contains(got, "rejected") {
		t.Errorf("summary with cross-checks skipped and positions solved again:\n%s", got)
	}
	out.Reset()
	Write(&out, coordinator.Summary{JobID: "j", Failed: []coordinator.FailedTask{{Index: 1}}}, Options{Book: "b.db", Alone: true, CPU: 1500 * time.Millisecond})
	got = out.String()
	if !strings.HasPrefix(got, "Job j incomplete") || value(got, "cross-checks") != "skipped" || value(got, "cpu time") != "1.50s" {
		t.Errorf("summary of a lone worker's failed job:\n%s", got)
	}
	out.Reset()
	Write(&out, coordinator.Summary{JobID: "j", Duplicates: 3, Compared: 2, TailCopies: 2, Workers: map[string]queue.WorkerResults{"a": {Accepted: 40}, "b": {Accepted: 20}}}, Options{Book: "b.db"})
	got = out.String()
	if value(got, "results not needed") != "3" || !strings.Contains(got, "(5.0% of the results accepted; tasks solved twice") ||
		!strings.Contains(got, "; 2 of tasks stored compared with their scores") ||
		value(got, "tail copies") != "2" || !strings.Contains(got, "(the job's last tasks, out for long") {
		t.Errorf("summary with tasks solved twice and tail copies:\n%s", got)
	}
}

// TestWriteByWorker: the summary's lines by worker, with the results
// accepted and rejected, the cross-checks when tasks were cross-checked,
// and a worker whose results were all rejected.
func TestWriteByWorker(t *testing.T) {
	t.Parallel()
	s := coordinator.Summary{
		Solved:   120,
		ByWorker: map[string]int64{"alice": 90, "bob": 30},
		Workers: map[string]queue.WorkerResults{
			"alice":   {Accepted: 12, CrossPassed: 2},
			"bob":     {Accepted: 4, Rejected: 1, CrossPassed: 1, CrossFailed: 1},
			"mallory": {Rejected: 3},
		},
	}
	perSec := func(n float64) string { return human.Rate(n / 10) }
	var b strings.Builder
	writeByWorker(&b, s, perSec)
	want := "  by worker:\n" +
		"    alice    90 positions  75.0%  9.00/s  12 results accepted  0 rejected\n" +
		"    bob      30 positions  25.0%  3.00/s  4 results accepted   1 rejected\n" +
		"    mallory  0 positions   0.0%   0.00/s  0 results accepted   3 rejected\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	s.CrossChecked, s.Disagreements = 2, 1
	b.Reset()
	writeByWorker(&b, s, perSec)
	if lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(lines) != 4 || !strings.HasSuffix(lines[2], "1 rejected  cross-checks 1 passed  1 failed") {
		t.Errorf("with cross-checks:\n%s", b.String())
	}
}

// TestCrossCheckNote: the summary says who decided the cross-checked
// tasks; a worker checked only by the coordinator (nobody else took a copy)
// is not shown as checked by "0 decided by the coordinator".
func TestCrossCheckNote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    coordinator.Summary
		want string
	}{
		{coordinator.Summary{CrossChecked: 35, Refereed: 35}, "(0 by two workers agreeing, 35 by the coordinator's own solve)"},
		{coordinator.Summary{CrossChecked: 170, Disagreements: 2, Refereed: 3}, "(169 by two workers agreeing, 3 by the coordinator's own solve: 2 disagreements)"},
	} {
		if got := crossCheckNote(c.s); got != c.want {
			t.Errorf("crossCheckNote(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}
