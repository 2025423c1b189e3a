package status

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/queue"
)

// Print writes rep as two tables, times relative to now. With a history
// (status --watch), each job also shows its rate and ETA (History.Trend).
func Print(w io.Writer, rep Report, now time.Time, hist *History) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rep.Jobs) == 0 {
		fmt.Fprintln(w, "Jobs: none reported.")
	} else {
		// DONE and TOTAL count the positions of the phase the job is in:
		// made while planning, solved while solving, scored while deriving.
		trend := ""
		if hist != nil {
			trend = "RATE/S\tETA\t"
		}
		fmt.Fprintln(tw, "JOB\tSTATE\tDONE\tTOTAL\t%\t"+trend+"FAILED\tSTARTED\tUPDATED")
		for _, j := range rep.Jobs {
			pct := "-"
			if j.Total > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(j.Done)/float64(j.Total))
			}
			if hist != nil {
				rate, eta := hist.Trend(j, now)
				trend = rate + "\t" + eta + "\t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%d\t%s\t%s\n", j.JobID, j.State, human.Count(j.Done), human.Count(j.Total), pct, trend, j.Failed,
				j.Started.Local().Format(time.DateTime), ago(now, j.Updated))
		}
		tw.Flush()
	}
	for _, j := range rep.Jobs {
		if j.Message != "" {
			fmt.Fprintf(w, "Job %s: %s\n", j.JobID, j.Message)
		}
		if len(j.Quarantined) > 0 {
			fmt.Fprintf(w, "Job %s: quarantined workers (results ignored): %s\n", j.JobID, strings.Join(j.Quarantined, ", "))
		}
	}
	for _, id := range rep.Missing {
		fmt.Fprintf(w, "Job %s: no status on this server.\n", id)
	}
	for _, k := range rep.Junk {
		fmt.Fprintf(w, "Status %s: not a status but a server's answer to a request some client sent onto it; left out until its owner puts its status again.\n", k)
	}
	printWorkerResults(w, rep.Jobs)
	fmt.Fprintln(w)
	if len(rep.Workers) == 0 {
		fmt.Fprintln(w, "Workers: none seen in the last two minutes.")
		return
	}
	// SOLVED, TASKS and RATE/S are the worker's own report (as old as
	// LAST SEEN); STORED, its positions the job of its last task stored,
	// is the job's count, as current as the job's UPDATED.
	fmt.Fprintln(tw, "WORKER\tHOST\tSOLVED\tTASKS\tRATE/S\tSTORED\tBUSY\tJOB\tLAST SEEN")
	var paused []string
	for _, s := range rep.Workers {
		busy := "no"
		switch {
		case s.Paused != "":
			busy = "paused"
			paused = append(paused, fmt.Sprintf("Worker %s is paused: %s.", s.WorkerID, s.Paused))
		case s.Busy:
			busy = "yes"
		}
		job, stored := s.JobID, "-"
		if job == "" {
			job = "-"
		}
		for _, j := range rep.Jobs {
			if c, ok := j.Workers[s.WorkerID]; ok && j.JobID == s.JobID && c.Positions > 0 {
				stored = human.Count(c.Positions)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.WorkerID, s.Host, human.Count(s.Solved), human.Count(s.Tasks),
			human.Rate(s.Rate), stored, busy, job, ago(now, s.Seen))
	}
	tw.Flush()
	for _, line := range paused {
		fmt.Fprintln(w, line)
	}
}

// printWorkerResults writes, for the jobs whose coordinator counted any,
// the results of each worker it accepted and rejected in its run, and the
// cross-checks each passed and failed.
func printWorkerResults(w io.Writer, jobs []queue.JobStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	for _, j := range jobs {
		for _, id := range slices.Sorted(maps.Keys(j.Workers)) {
			if !header {
				fmt.Fprintln(w)
				fmt.Fprintln(tw, "JOB\tWORKER\tACCEPTED\tREJECTED\tCROSS-CHECKS PASSED\tFAILED")
				header = true
			}
			c := j.Workers[id]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.JobID, id, human.Count(c.Accepted), human.Count(c.Rejected), human.Count(c.CrossPassed), human.Count(c.CrossFailed))
		}
	}
	tw.Flush()
}

// ago writes how long before now t was: "3s ago".
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return human.Span(d.Round(time.Second)) + " ago"
}
