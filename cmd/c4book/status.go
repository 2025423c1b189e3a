package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/human"
	"github.com/c4book/c4book/jobproc"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

const statusLong = `Show the jobs and the workers of a NATS server (--nats URL, nats.url).

Jobs: state, positions solved of those to solve, failed tasks, when the
job started and when its coordinator last reported; then, by job and
worker, the results its coordinator accepted and rejected in its run, and
the cross-checks each worker passed and failed. Every job a
coordinator reported to the server is shown, or only those named with
--job and the job of --depth and --root (with --width and --height) when
either is given.

Workers: id, host, positions solved, tasks done, rate (positions solved
per second since the worker started, as of its last report), whether it
is busy (on a task when it reported, or took one since its report before:
it reports every 15 seconds, and at once when it takes a task after a
report that said it was idle), and when it last reported (a worker silent
for two minutes is gone from the list).

--json prints one JSON object {"jobs": [...], "workers": [...]} with the
fields of the coordinator's and the workers' reports, and "rate".

--watch shows the status again every --interval (default 5s) until
Ctrl-C, which ends it with status 0: on a terminal the screen is cleared
and redrawn, otherwise the reports follow one another with a blank line
between two. Each job then also shows its RATE/S and ETA, from its two
latest reports: the positions done between them over the time between
them. ETA is "--" until there are two reports of the phase, and "-" when
nothing moved between them, when the job is not running, or when its
coordinator has not reported for a minute. A server that does not answer,
or a queue not set up yet, is said in place of the report, and the watch
goes on.

Credentials are those of the other commands: the operator's token
(nats.token) or user and password (nats.user, nats.password), or, on a
cluster whose workers connect with keys, an observer's key (--nkey FILE,
nats.nkey, made by "c4book worker add NAME --observer"), which may read
the status and nothing else. A worker's key may not read it: status says
so at once.`

const statusExample = `  c4book status --nats nats://coordinator:4222
  c4book status --nats nats://coordinator:4222 --depth 12 --json
  c4book status --nats nats://coordinator:4222 --watch --interval 10s
  c4book status --nats nats://coordinator:4222 --nkey ops.nkey --watch`

// newStatusCommand builds "c4book status".
func newStatusCommand(a *app) *cobra.Command {
	var jobs []string
	var asJSON, watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:     "status --nats URL [--nkey FILE] [--job ID]... [--depth D] [--root MOVES] [--json | --watch [--interval D]]",
		Short:   "Show the jobs and workers of a NATS server",
		Long:    statusLong,
		Example: statusExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.NATS.URL == "" {
				return newUsageError(cmd, errors.New("--nats URL (nats.url) is required: the NATS server of the coordinator, such as nats://host:4222"))
			}
			switch {
			case watch && asJSON:
				return newUsageError(cmd, errors.New("--watch and --json do not go together: --watch draws tables for people"))
			case cmd.Flags().Changed("interval") && !watch:
				return newUsageError(cmd, errors.New("--interval goes with --watch"))
			case interval <= 0:
				return newUsageError(cmd, fmt.Errorf("--interval %v: must be more than 0", interval))
			}
			if !watch {
				interval = 0
			}
			if err := checkStatusKey(cfg.NATS); err != nil {
				return err
			}
			if cmd.Flags().Changed("depth") || cmd.Flags().Changed("root") {
				board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
				if err != nil {
					return err
				}
				spec := coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth}
				jobs = append(jobs, spec.ID())
			}
			return runStatus(cmd.Context(), a, cfg, jobs, asJSON, interval)
		},
	}
	f := cmd.Flags()
	f.String("nats", "", "`URL` of the NATS server (nats.url)")
	bindKey(f, "nats", "nats.url")
	f.String("nkey", "", "an observer's key `FILE`, made by c4book worker add NAME --observer (nats.nkey)")
	bindKey(f, "nkey", "nats.nkey")
	f.StringArrayVar(&jobs, "job", nil, "show the job `ID` (\"7x6-d12\", \"7x6-4453-d16\"); repeatable")
	// No default is shown: without --depth, --root or --job every job is.
	// --root alone takes its depth from generate.depth.
	f.Int("depth", 0, "show the job of depth `D` (generate.depth, also the depth of --root given alone)")
	bindKey(f, "depth", "generate.depth")
	f.String("root", "", "show the job of this root `MOVES` (generate.root)")
	bindKey(f, "root", "generate.root")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&watch, "watch", false, "show the status again every --interval until Ctrl-C, with each job's rate and ETA")
	f.DurationVar(&interval, "interval", defaultWatchInterval, "time `D` between two reports of --watch")
	return cmd
}

// statusCredentials says which credentials may read the cluster's
// status, for the errors of status.
const statusCredentials = "use an observer's key (c4book worker add NAME --observer on the coordinator's machine, then --nkey FILE), " +
	"or the operator's nats.token, or nats.user and nats.password"

// checkStatusKey refuses a key file of nats.nkey that is not an
// observer's: a worker's key may not read the status, and the server
// would refuse it after the connection.
func checkStatusKey(n config.NATS) error {
	if n.NKey == "" {
		return nil
	}
	k, err := queue.ReadKey(n.NKey)
	if err != nil {
		return fmt.Errorf("nats.nkey: %w", err)
	}
	if k.Role != queue.RoleObserver { // a worker's: ReadKey knows no other role
		return fmt.Errorf("nats.nkey (%s) is worker %s's key, and a worker's key cannot read the cluster's status (it may only take tasks and publish its own results): %s",
			n.NKey, k.Name, statusCredentials)
	}
	return nil
}

// statusError explains err, the failure of a status read from the
// server of cfg: credentials the server does not let read the status.
func statusError(cfg config.Config, err error) error {
	if errors.Is(err, queue.ErrForbidden) {
		return fmt.Errorf("the server at %s does not let these credentials read the cluster's status (%s): %s: %w",
			cfg.NATS.URL, jobproc.CredentialsSet(cfg.NATS), statusCredentials, err)
	}
	return err
}

// defaultWatchInterval is the time between two reports of status --watch:
// that between two reports of a coordinator (coordinator.Config's
// StatusEvery).
const defaultWatchInterval = 5 * time.Second

// workerReport is a worker's status with its rate, as status prints it.
type workerReport struct {
	queue.WorkerStatus
	Rate float64 `json:"rate"` // positions solved per second from Started to Seen
}

// statusReport is what status prints.
type statusReport struct {
	Jobs    []queue.JobStatus `json:"jobs"`
	Missing []string          `json:"missing,omitempty"` // jobs asked for that have no status
	Workers []workerReport    `json:"workers"`
}

// runStatus prints the status of the jobs named (all jobs if none is), and
// of the workers; with a positive interval, again every interval until
// ctx is done (watchStatus).
func runStatus(ctx context.Context, a *app, cfg config.Config, jobs []string, asJSON bool, interval time.Duration) error {
	for _, id := range jobs {
		if err := queue.ValidJobID(id); err != nil {
			return fmt.Errorf("--job %q: %w", id, err)
		}
	}
	conn, err := jobproc.Connect(ctx, cfg, "c4book status", nil)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	defer conn.Close()
	if interval > 0 {
		return statusError(cfg, watchStatus(ctx, a.stdout, isTerminal(a.stdout), conn, jobs, interval))
	}
	rep, err := readStatus(ctx, conn, jobs)
	if errors.Is(err, queue.ErrNotReady) {
		return fmt.Errorf("no coordinator has set up the queue on %s yet: %w", cfg.NATS.URL, err)
	}
	if err != nil {
		return statusError(cfg, err)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printStatus(a.stdout, rep, time.Now(), nil)
	return nil
}

// readStatus reads the statuses of the jobs named (all jobs if none is)
// and of the workers.
func readStatus(ctx context.Context, conn *queue.Conn, jobs []string) (statusReport, error) {
	rep := statusReport{Jobs: []queue.JobStatus{}, Workers: []workerReport{}}
	ws, err := conn.Workers(ctx)
	if err != nil {
		return rep, err
	}
	for _, w := range ws {
		rep.Workers = append(rep.Workers, workerReport{WorkerStatus: w, Rate: workerRate(w)})
	}
	if len(jobs) == 0 {
		all, err := conn.Jobs(ctx)
		if err != nil {
			return rep, err
		}
		rep.Jobs = append(rep.Jobs, all...)
	}
	for _, id := range jobs {
		s, err := conn.JobStatus(ctx, id)
		switch {
		case errors.Is(err, queue.ErrNotFound):
			rep.Missing = append(rep.Missing, id)
			continue
		case err != nil:
			return rep, err
		}
		rep.Jobs = append(rep.Jobs, s)
	}
	return rep, nil
}

// clearScreen moves the cursor home and clears a terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watchStatus writes the status to out every interval until ctx is done,
// and then returns nil. On a terminal (term) each report replaces the one
// before; otherwise the reports follow one another, a blank line between
// two. Each starts with a line saying when and where it was read. A
// server that does not answer, or a queue not set up yet, is said in place
// of the report, and the watch goes on; other errors end it.
func watchStatus(ctx context.Context, out io.Writer, term bool, conn *queue.Conn, jobs []string, interval time.Duration) error {
	hist := newJobHistory()
	url := conn.ConnectedURL()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		// A refresh that does not answer is given up on, to try again.
		rctx, cancel := context.WithTimeout(ctx, max(interval, 5*time.Second))
		rep, err := readStatus(rctx, conn, jobs)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if u := conn.ConnectedURL(); u != "" {
			url = u
		}
		now := time.Now()
		var b bytes.Buffer
		fmt.Fprintf(&b, "Status of %s at %s, every %v\n", url, now.Format(time.TimeOnly), interval)
		switch {
		case err == nil:
			hist.add(rep.Jobs)
			printStatus(&b, rep, now, hist)
		case errors.Is(err, queue.ErrNotReady):
			fmt.Fprintln(&b, "No coordinator has set up the queue on this server yet.")
		case queue.Transient(err):
			fmt.Fprintf(&b, "The NATS server does not answer (%v): trying again.\n", err)
		default:
			return err
		}
		switch {
		case term:
			io.WriteString(out, clearScreen)
		case n > 0:
			io.WriteString(out, "\n")
		}
		out.Write(b.Bytes())
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// statusStaleAfter is how long a job's latest report may be old before
// status --watch stops showing a rate and an ETA for it: its coordinator
// reports every 5 seconds, so it is stopped, or cut off.
const statusStaleAfter = time.Minute

// jobHistory is what status --watch remembers of each job from one
// refresh to the next: its latest report and the one before it (reports
// told apart by their time, Updated; the coordinator reports every 5
// seconds, whatever --interval is).
type jobHistory struct {
	latest, previous map[string]queue.JobStatus
}

func newJobHistory() *jobHistory {
	return &jobHistory{latest: map[string]queue.JobStatus{}, previous: map[string]queue.JobStatus{}}
}

// add records the job reports of a refresh. A report no later than the
// latest known of its job (the coordinator has not reported since) changes
// nothing.
func (h *jobHistory) add(jobs []queue.JobStatus) {
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

// trend returns the RATE/S and ETA cells of job j, its latest report, as
// of now: the positions done between its two latest reports over the time
// between them, and the time the positions left take at that rate. The
// rate is "-" and the ETA "--" until there are two reports of the phase;
// with nothing done between them the rate is 0 and there is no ETA ("-");
// nor is there one for a job not running, whose total is not known yet
// (planning), or whose coordinator has not reported for statusStaleAfter.
func (h *jobHistory) trend(j queue.JobStatus, now time.Time) (rate, eta string) {
	switch book.JobState(j.State) {
	case book.JobPlanning, book.JobSolving, book.JobDeriving:
	default:
		return "-", "-"
	}
	if now.Sub(j.Updated) > statusStaleAfter {
		return "-", "-"
	}
	prev, ok := h.previous[j.JobID]
	if !ok || prev.State != j.State || prev.Done > j.Done || !j.Updated.After(prev.Updated) {
		return "-", "--"
	}
	r := float64(j.Done-prev.Done) / j.Updated.Sub(prev.Updated).Seconds()
	if r == 0 {
		return "0", "-"
	}
	if j.Total == 0 || j.Done >= j.Total {
		return human.Rate(r), "-"
	}
	return human.Rate(r), human.Span(time.Duration(float64(j.Total-j.Done) / r * float64(time.Second)))
}

// workerRate returns the positions a worker solved per second, from its
// start to its last report.
func workerRate(w queue.WorkerStatus) float64 {
	if d := w.Seen.Sub(w.Started).Seconds(); d > 0 {
		return float64(w.Solved) / d
	}
	return 0
}

// printStatus writes rep as two tables, times relative to now. With a
// history (status --watch), each job also shows its rate and ETA
// (jobHistory.trend).
func printStatus(w io.Writer, rep statusReport, now time.Time, hist *jobHistory) {
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
				rate, eta := hist.trend(j, now)
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
	printWorkerResults(w, rep.Jobs)
	fmt.Fprintln(w)
	if len(rep.Workers) == 0 {
		fmt.Fprintln(w, "Workers: none seen in the last two minutes.")
		return
	}
	fmt.Fprintln(tw, "WORKER\tHOST\tSOLVED\tTASKS\tRATE/S\tBUSY\tJOB\tLAST SEEN")
	for _, s := range rep.Workers {
		busy := "no"
		if s.Busy {
			busy = "yes"
		}
		job := s.JobID
		if job == "" {
			job = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.WorkerID, s.Host, human.Count(s.Solved), human.Count(s.Tasks),
			human.Rate(s.Rate), busy, job, ago(now, s.Seen))
	}
	tw.Flush()
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
