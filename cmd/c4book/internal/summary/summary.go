// Package summary writes, for a person, what a run of a generation job
// did (generate, coordinator): the positions it solved, scored and
// derived, what it made of the workers' results, its time and CPU, and
// the same by worker; and the tasks it gave up on.
package summary

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/coordinator"
)

// Options says what Write tells beyond the summary.
type Options struct {
	Book string // the path of the job's book
	// Alone says the job's only worker was the process's own, with
	// cross-checks asked for: none could be made.
	Alone bool
	// CPU is the process's CPU time (user and system); 0 if not known.
	CPU time.Duration
}

// Write writes what a run of a job did: a table of rows "label value
// (note)", the rows that would say none left out, then the rows by worker.
func Write(w io.Writer, s coordinator.Summary, o Options) {
	state := "complete"
	if len(s.Failed) > 0 {
		state = "incomplete"
	}
	fmt.Fprintf(w, "Job %s %s: book %s\n", s.JobID, state, o.Book)
	row := func(label, value, note string) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-20s %14s  %s", label, value, note), " "))
	}
	secs := s.Wall.Seconds()
	perSec := func(n float64) string {
		if secs <= 0 {
			return "-"
		}
		return human.Rate(n / secs)
	}
	row("positions", human.Count(s.Positions), "")
	row("in the book before", human.Count(s.InBook), "")
	row("solved by workers", human.Count(s.Solved), "")
	row("scored at once", human.Count(s.Immediate), "")
	row("derived", human.Count(s.Derived), "")
	if s.Rejected > 0 {
		row("results rejected", human.Count(s.Rejected), "(of workers, each counted against its worker: see by worker)")
	}
	if s.Malformed > 0 {
		row("messages dropped", human.Count(s.Malformed), "(on the results subjects, not results: counted against no worker)")
	}
	if s.Unsigned > 0 {
		row("results unsigned", human.Count(s.Unsigned), "(on a registered worker's subject, not signed by its key: refused, not counted against it)")
	}
	if s.Ignored > 0 || len(s.Quarantined) > 0 {
		row("results ignored", human.Count(s.Ignored), "(quarantined: "+strings.Join(s.Quarantined, ", ")+")")
	}
	if s.CrossChecked > 0 || s.Disagreements > 0 {
		row("cross-checked tasks", human.Count(s.CrossChecked+s.Disagreements), crossCheckNote(s))
	}
	switch {
	case o.Alone:
		row("cross-checks", "skipped", "(the only worker is this process's: nobody to check it against)")
	case s.CrossSkipped > 0:
		row("cross-checks skipped", human.Count(s.CrossSkipped), "(tasks no other worker came to check: stored on the first answer, no copy solved for nothing)")
	}
	if len(s.Repaired) > 0 {
		row("queue set up again", fmt.Sprint(len(s.Repaired)), "(deleted while the job ran: "+strings.Join(s.Repaired, ", ")+")")
	}
	if s.Overdue > 0 {
		row("tasks overdue", human.Count(s.Overdue), "(out too long, held by a worker that does not answer or lost from the queue: published again)")
	}
	if s.TailCopies > 0 {
		row("tail copies", human.Count(s.TailCopies), "(the job's last tasks, out for long in a slow worker's hands: a copy each for a worker with nothing to do; the first answer counts)")
	}
	if s.Duplicates > 0 {
		var accepted uint64
		for _, c := range s.Workers {
			accepted += c.Accepted
		}
		share := ""
		if accepted > 0 {
			share = fmt.Sprintf("%.1f%% of the results accepted; ", 100*float64(s.Duplicates)/float64(accepted))
		}
		compared := ""
		if s.Compared > 0 {
			compared = "; " + human.Count(s.Compared) + " of tasks stored compared with their scores, each that differed solved by the coordinator"
		}
		row("results not needed", human.Count(s.Duplicates), "("+share+"tasks solved twice: redelivered, overdue, tail copies, or answered late by a worker that came back"+compared+")")
	}
	if s.Requeued > 0 {
		row("solved again", human.Count(s.Requeued), "(positions of workers quarantined after their results were stored)")
	}
	row("wall time", human.Span(s.Wall), "")
	if o.CPU > 0 {
		row("cpu time", fmt.Sprintf("%.2fs", o.CPU.Seconds()), "(this process: user and system)")
	}
	row("nodes", human.Count(s.Nodes), "("+perSec(float64(s.Nodes))+"/s)")
	row("positions solved/s", perSec(float64(s.Solved)), "")
	writeByWorker(w, s, perSec)
}

// crossCheckNote says how the cross-checked tasks of s were decided: by
// two workers agreeing, or by the coordinator's own solve (when two
// disagreed, or when no other worker took a copy).
func crossCheckNote(s coordinator.Summary) string {
	agreed := s.CrossChecked + s.Disagreements - s.Refereed
	note := fmt.Sprintf("(%s by two workers agreeing, %s by the coordinator's own solve", human.Count(agreed), human.Count(s.Refereed))
	if s.Disagreements > 0 {
		note += fmt.Sprintf(": %s disagreements", human.Count(s.Disagreements))
	}
	return note + ")"
}

// writeByWorker writes the summary's lines by worker: the positions each
// solved, and what the coordinator made of its results (accepted,
// rejected, and the cross-checks passed and failed when tasks were
// cross-checked).
func writeByWorker(w io.Writer, s coordinator.Summary, perSec func(float64) string) {
	ids := slices.Sorted(maps.Keys(s.ByWorker))
	for id := range s.Workers {
		if _, ok := s.ByWorker[id]; !ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	cross := s.CrossChecked > 0 || s.Disagreements > 0
	fmt.Fprintln(w, "  by worker:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, id := range ids {
		n := s.ByWorker[id]
		share := 0.0
		if s.Solved > 0 {
			share = 100 * float64(n) / float64(s.Solved)
		}
		c := s.Workers[id]
		fmt.Fprintf(tw, "    %s	%s positions	%.1f%%	%s/s	%s results accepted	%s rejected", id, human.Count(n), share, perSec(float64(n)),
			human.Count(c.Accepted), human.Count(c.Rejected))
		if cross {
			fmt.Fprintf(tw, "	cross-checks %s passed	%s failed", human.Count(c.CrossPassed), human.Count(c.CrossFailed))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// maxFailedShown is the number of failed tasks listed.
const maxFailedShown = 10

// WriteFailed lists the tasks given up on, with a few of their positions.
func WriteFailed(w io.Writer, failed []coordinator.FailedTask) {
	for i, f := range failed {
		if i == maxFailedShown {
			fmt.Fprintf(w, "... and %d more failed tasks\n", len(failed)-maxFailedShown)
			break
		}
		moves := f.Moves
		more := ""
		if len(moves) > 3 {
			moves, more = moves[:3], fmt.Sprintf(" and %d more", len(f.Moves)-3)
		}
		fmt.Fprintf(w, "failed task %d: positions %s%s\n", f.Index, strings.Join(moves, " "), more)
	}
}
