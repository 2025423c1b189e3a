package status

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
)

// TestPrintWorkerResults: the results of each worker by job, in a table
// after the jobs', and nothing for jobs whose coordinator counted none.
func TestPrintWorkerResults(t *testing.T) {
	jobs := []queue.JobStatus{
		{JobID: "7x6-d8"},
		{JobID: "7x6-d12", Workers: map[string]queue.WorkerResults{
			"mallory": {Accepted: 2, Rejected: 3, CrossPassed: 1, CrossFailed: 2},
			"alice":   {Accepted: 1234, CrossPassed: 5},
		}},
	}
	var b strings.Builder
	printWorkerResults(&b, jobs)
	want := "\n" +
		"JOB      WORKER   ACCEPTED  REJECTED  CROSS-CHECKS PASSED  FAILED\n" +
		"7x6-d12  alice    1,234     0         5                    0\n" +
		"7x6-d12  mallory  2         3         1                    2\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printWorkerResults(&b, jobs[:1])
	if b.Len() != 0 {
		t.Errorf("a job without counts printed %q", b.String())
	}
}

// TestPrint_stored: a worker's row has the positions the job of its last
// task stored from it, from the job's status, beside its own report.
func TestPrint_stored(t *testing.T) {
	now := time.Now()
	rep := Report{
		Jobs: []queue.JobStatus{{JobID: "7x6-d16", State: "solving", Done: 12032, Total: 100000, Updated: now,
			Workers: map[string]queue.WorkerResults{"w1": {Accepted: 188, Positions: 12032}}}},
		Workers: []Worker{
			{WorkerStatus: queue.WorkerStatus{WorkerID: "w1", Host: "h1", Solved: 64, Tasks: 1, JobID: "7x6-d16", Seen: now.Add(-10 * time.Second)}},
			{WorkerStatus: queue.WorkerStatus{WorkerID: "w2", Host: "h2", Solved: 5, Tasks: 1, JobID: "7x6-d14", Seen: now, Paused: "outside the hours 22:00-07:00"}},
		},
	}
	var b strings.Builder
	Print(&b, rep, now, nil)
	var rows [][]string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "w1" || f[0] == "w2") && len(f) > 5 {
			rows = append(rows, f)
		}
	}
	if len(rows) != 2 || rows[0][2] != "64" || rows[0][5] != "12,032" || rows[1][5] != "-" || rows[1][6] != "paused" {
		t.Errorf("worker rows %q: want w1 with 64 solved by its report and 12,032 stored, w2 none stored and paused:\n%s", rows, b.String())
	}
	if !strings.Contains(b.String(), "Worker w2 is paused: outside the hours 22:00-07:00.") {
		t.Errorf("no word of w2's pause:\n%s", b.String())
	}
}

// TestPrint_watch: with a history, the job table has a rate and an
// ETA; without, it has neither.
func TestPrint_watch(t *testing.T) {
	t0 := time.Now().Add(-10 * time.Second)
	rep := func(done uint64, at time.Time) Report {
		return Report{Jobs: []queue.JobStatus{{JobID: "5x4-d10", State: "solving", Done: done, Total: 11000, Started: t0, Updated: at}}}
	}
	h := NewHistory()
	var b strings.Builder
	for i, r := range []Report{rep(1000, t0), rep(3000, t0.Add(10*time.Second))} {
		b.Reset()
		h.Add(r.Jobs)
		Print(&b, r, t0.Add(10*time.Second), h)
		lines := strings.Split(b.String(), "\n")
		if head := []string{"JOB", "STATE", "DONE", "TOTAL", "%", "RATE/S", "ETA", "FAILED"}; !slices.Equal(firstFields(lines[0], len(head)), head) {
			t.Fatalf("header %q", lines[0])
		}
		want := [][]string{
			{"5x4-d10", "solving", "1,000", "11,000", "9.1%", "-", "--", "0"},
			{"5x4-d10", "solving", "3,000", "11,000", "27.3%", "200", "40s", "0"},
		}[i]
		if !slices.Equal(firstFields(lines[1], len(want)), want) {
			t.Errorf("report %d: job line %q, want it to start with %q", i+1, lines[1], want)
		}
	}
	b.Reset()
	Print(&b, rep(3000, t0), t0, nil)
	if strings.Contains(b.String(), "ETA") {
		t.Errorf("a single report shows an ETA:\n%s", b.String())
	}
}

// firstFields returns the first n fields of line, or all if it has fewer.
func firstFields(line string, n int) []string {
	f := strings.Fields(line)
	return f[:min(n, len(f))]
}

// TestRead_junk: a job named whose key holds junk is neither shown nor
// missing; the junk keys are named, and say what they hold.
func TestRead_junk(t *testing.T) {
	now := time.Now()
	conn := &fakeConn{
		workers: []queue.WorkerStatus{{WorkerID: "w1", Host: "h", Started: now, Seen: now}},
		junk:    []string{"job.5x4-d10", "worker.w2"},
	}
	rep, err := Read(context.Background(), junkJob{conn}, []string{"5x4-d10"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Jobs) != 0 || len(rep.Missing) != 0 || len(rep.Junk) != 2 {
		t.Fatalf("jobs %v, missing %v, junk %v: want the junk alone", rep.Jobs, rep.Missing, rep.Junk)
	}
	var out strings.Builder
	Print(&out, rep, now, nil)
	for _, k := range conn.junk {
		if want := "Status " + k + ": not a status but a server's answer to a request some client sent onto it"; !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// junkJob is a fakeConn whose job statuses are junk.
type junkJob struct{ *fakeConn }

func (junkJob) JobStatus(_ context.Context, id string) (queue.JobStatus, error) {
	return queue.JobStatus{}, fmt.Errorf("job status of %s: %w", id, queue.ErrMalformed)
}
