package status

import (
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/queue"
)

// staleAfter is how long a job's latest report may be old before its rate
// and ETA are no longer shown: its coordinator reports every 5 seconds, so
// it is stopped, or cut off.
const staleAfter = time.Minute

// History is what status --watch remembers of each job from one refresh
// to the next: its latest report and the one before it (reports told
// apart by their time, Updated; the coordinator reports every 5 seconds,
// whatever the interval of the watch is).
type History struct {
	latest, previous map[string]queue.JobStatus
}

// NewHistory returns a history of no report.
func NewHistory() *History {
	return &History{latest: map[string]queue.JobStatus{}, previous: map[string]queue.JobStatus{}}
}

// Add records the job reports of a refresh. A report no later than the
// latest known of its job (the coordinator has not reported since) changes
// nothing.
func (h *History) Add(jobs []queue.JobStatus) {
	for _, j := range jobs {
		last, ok := h.latest[j.JobID]
		if ok && !j.Updated.After(last.Updated) {
			continue
		}
		if ok {
			h.previous[j.JobID] = last
		}
		h.latest[j.JobID] = j
	}
}

// Trend returns the RATE/S and ETA cells of job j, its latest report, as
// of now: the positions done between its two latest reports over the time
// between them, and the time the positions left take at that rate. The
// rate is "-" and the ETA "--" until there are two reports of the phase;
// with nothing done between them the rate is 0 and there is no ETA ("-");
// nor is there one for a job not running, whose total is not known yet
// (planning), or whose coordinator has not reported for a minute.
func (h *History) Trend(j queue.JobStatus, now time.Time) (rate, eta string) {
	switch book.JobState(j.State) {
	case book.JobPlanning, book.JobSolving, book.JobDeriving:
	default:
		return "-", "-"
	}
	if now.Sub(j.Updated) > staleAfter {
		return "-", "-"
	}
	prev, ok := h.previous[j.JobID]
	if !ok || prev.State != j.State || prev.Done > j.Done || !j.Updated.After(prev.Updated) {
		return "-", "--"
	}
	r := progress.Rate(j.Done-prev.Done, j.Updated.Sub(prev.Updated))
	if r == 0 {
		return "0", "-"
	}
	if j.Total == 0 || j.Done >= j.Total {
		return human.Rate(r), "-"
	}
	return human.Rate(r), human.Span(progress.TimeLeft(j.Total-j.Done, r))
}
