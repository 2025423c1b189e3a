package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/cmd/c4book/internal/status"
	"github.com/c4book/c4book/queue"
)

func TestStatus_Run(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	t.Run("before any coordinator", func(t *testing.T) {
		r := run(t, "", "status", "--nats", url)
		wantErr(t, r, "no coordinator has set up the queue on "+url)
	})

	w := startCommand(t, workerArgs(url, "w1")...)
	r := run(t, "", jobArgs("coordinator", filepath.Join(t.TempDir(), "5x4.db"), "--nats", url)...)
	wantOK(t, r)
	// The worker stays: its status is there until it leaves.

	t.Run("table", func(t *testing.T) {
		r := run(t, "", "status", "--nats", url, "--width=5", "--height=4", "--depth=10")
		wantOK(t, r)
		lines := outputLines(r.stdout)
		want := [][]string{
			{"JOB", "STATE", "DONE", "TOTAL", "%", "FAILED", "STARTED", "UPDATED"},
			{"5x4-d10", "done"},
			{"JOB", "WORKER", "ACCEPTED", "REJECTED", "CROSS-CHECKS", "PASSED", "FAILED"},
			{"5x4-d10", "w1"},
			{"WORKER", "HOST", "SOLVED", "TASKS", "RATE/S", "STORED", "BUSY", "JOB", "LAST", "SEEN"},
			{"w1"},
		}
		row := 0
		for _, l := range lines {
			if row < len(want) && fieldsStartWith(l, want[row]) {
				row++
			}
		}
		if row < len(want) {
			t.Errorf("no line starting with %q in order:\n%s", want[row], r.stdout)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := run(t, "", "status", "--nats", url, "--job", "5x4-d10", "--job", "5x4-d12", "--json")
		wantOK(t, r)
		var rep status.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		if len(rep.Jobs) != 1 || rep.Jobs[0].JobID != "5x4-d10" || rep.Jobs[0].State != "done" || rep.Jobs[0].Done != rep.Jobs[0].Total || rep.Jobs[0].Total == 0 {
			t.Errorf("jobs: %+v", rep.Jobs)
		}
		if c := rep.Jobs[0].Workers["w1"]; len(rep.Jobs) == 1 && (len(rep.Jobs[0].Workers) != 1 || c.Accepted == 0 || c.Rejected != 0 || c.Positions == 0) {
			t.Errorf("results by worker: %+v, want w1's accepted, and their positions", rep.Jobs[0].Workers)
		}
		if len(rep.Missing) != 1 || rep.Missing[0] != "5x4-d12" {
			t.Errorf("missing: %v, want [5x4-d12]", rep.Missing)
		}
		if len(rep.Workers) != 1 || rep.Workers[0].WorkerID != "w1" || rep.Workers[0].Host == "" {
			t.Errorf("workers: %+v", rep.Workers)
		}
	})
	t.Run("--root alone takes generate.depth", func(t *testing.T) {
		t.Setenv("C4BOOK_GENERATE_DEPTH", "10")
		r := run(t, "", "status", "--nats", url, "--width=5", "--height=4", "--root=", "--json")
		wantOK(t, r)
		var rep status.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		if len(rep.Jobs) != 1 || rep.Jobs[0].JobID != "5x4-d10" {
			t.Errorf("jobs: %+v, missing: %v; want 5x4-d10", rep.Jobs, rep.Missing)
		}
	})
	t.Run("bad job id", func(t *testing.T) {
		r := run(t, "", "status", "--nats", url, "--job", "a b")
		wantErr(t, r, `--job "a b"`)
	})
	w.stop()
	t.Run("worker gone", func(t *testing.T) {
		r := run(t, "", "status", "--nats", url)
		wantOK(t, r)
		if !strings.Contains(r.stdout, "Workers: none seen in the last two minutes.") {
			t.Errorf("a worker that left is listed:\n%s", r.stdout)
		}
	})
}

// TestStatus_help: the help claims no default job to show, since every
// job is shown unless --depth, --root or --job is given.
func TestStatus_help(t *testing.T) {
	t.Parallel()
	r := run(t, "", "status", "--help")
	wantOK(t, r)
	for _, line := range outputLines(r.stdout) {
		if (strings.Contains(line, "--depth") || strings.Contains(line, "--root")) && strings.Contains(line, "(default") {
			t.Errorf("the help claims a default: %s", line)
		}
	}
	if !strings.Contains(r.stdout, "Every job a\ncoordinator reported to the server is shown") {
		t.Errorf("the help does not say every job is shown by default:\n%s", r.stdout)
	}
}

// fieldsStartWith reports whether the fields of line begin with want.
func fieldsStartWith(line string, want []string) bool {
	f := strings.Fields(line)
	if len(f) < len(want) {
		return false
	}
	for i, w := range want {
		if f[i] != w {
			return false
		}
	}
	return true
}

// TestStatus_watch: status --watch prints a report every interval, a
// blank line between two, shows a job's rate and ETA once it reported
// twice, and ends with status 0 on Ctrl-C.
func TestStatus_watch(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	ctx := context.Background()
	conn := queueOn(t, url, "s3cret")
	t0 := time.Now().Add(-10 * time.Second)
	put := func(done uint64, at time.Time) {
		t.Helper()
		if err := conn.PutJobStatus(ctx, queue.JobStatus{JobID: "5x4-d10", State: "solving", Done: done, Total: 11000, Started: t0, Updated: at}); err != nil {
			t.Fatal(err)
		}
	}
	put(1000, t0)
	if err := conn.PutWorkerStatus(ctx, queue.WorkerStatus{WorkerID: "w1", Host: "h", Solved: 500, Started: t0, Busy: true, JobID: "5x4-d10"}); err != nil {
		t.Fatal(err)
	}

	w := startCommand(t, "status", "--nats", url, "--watch", "--interval=100ms")
	w.stdout.waitLine(t, "Status of "+url, w.done)
	put(3000, t0.Add(10*time.Second))
	line := w.stdout.waitLine(t, "3,000", w.done)
	if want := []string{"5x4-d10", "solving", "3,000", "11,000", "27.3%", "200", "40s"}; !fieldsStartWith(line, want) {
		t.Errorf("job line %q, want it to start with %q", line, want)
	}
	r := w.stop()
	if r.err != nil {
		t.Fatalf("stopped by Ctrl-C: %v (exit code %d), want exit code 0", r.err, exitCode(r.err))
	}
	reports := strings.Split(r.stdout, "\n\nStatus of ")
	if len(reports) < 2 || !strings.HasPrefix(r.stdout, "Status of "+url) {
		t.Fatalf("want reports starting with \"Status of\", a blank line between two:\n%s", r.stdout)
	}
	for i, rep := range reports {
		if !strings.Contains(rep, "w1") || !strings.Contains(rep, "5x4-d10") {
			t.Errorf("report %d does not show the job and the worker:\n%s", i+1, rep)
		}
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("not a terminal, but the screen is cleared:\n%q", r.stdout)
	}

}

func TestStatus_watchUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--watch", "--json"}, "--watch and --json do not go together"},
		{[]string{"--interval=1s"}, "--interval goes with --watch"},
		{[]string{"--watch", "--interval=0s"}, "--interval 0s: must be more than 0"},
	} {
		r := run(t, "", append([]string{"status", "--nats", "nats://127.0.0.1:1"}, c.args...)...)
		wantErr(t, r, c.want)
		if code := exitCode(r.err); code != 2 {
			t.Errorf("%v: exit code %d, want 2", c.args, code)
		}
	}
}

// TestStatus_observerKey: on a cluster whose coordinator has keys and no
// other credentials, an observer's key reads the status (once, --json and
// --watch), a worker's key is refused at once with what can read it, and
// observers come and go through the registry while the job runs.
func TestStatus_observerKey(t *testing.T) {
	// Not parallel: it sets registryPoll, which the parallel tests read.
	defer func(d time.Duration) { registryPoll = d }(registryPoll)
	registryPoll = 100 * time.Millisecond
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	keyOf := func(name string) string { return filepath.Join(dir, name+".nkey") }
	wantOK(t, run(t, "", "worker", "add", "lab-1", "--book", bookPath, "--out", keyOf("lab-1"), "--width=5", "--height=4"))
	wantOK(t, run(t, "", "worker", "add", "ops", "--observer", "--book", bookPath, "--out", keyOf("ops")))
	// No worker joins: the job waits, and its server with it.
	coord := startCommand(t, jobArgs("coordinator", bookPath, "--listen=127.0.0.1:0")...)
	line := coord.stdout.waitLine(t, "workers connect to ", coord.done)
	url := line[strings.LastIndex(line, " ")+1:]
	w := startCommand(t, "status", "--nats", url, "--nkey", keyOf("ops"), "--watch", "--interval=100ms")
	w.stdout.waitLine(t, "5x4-d10", w.done)
	if r := w.stop(); r.err != nil {
		t.Fatalf("status --watch with the observer's key: %v", r.err)
	}
	// lab-1's heartbeat, without solving: the job stays.
	lab1, err := queue.Connect(context.Background(), queue.Options{URL: url, NKey: keyOf("lab-1")})
	if err != nil {
		t.Fatal(err)
	}
	defer lab1.Close()
	if err := lab1.PutWorkerStatus(context.Background(), queue.WorkerStatus{WorkerID: "lab-1", Host: "h"}); err != nil {
		t.Fatal(err)
	}
	readStatusJSON := func(key string) status.Report {
		t.Helper()
		r := run(t, "", "status", "--nats", url, "--nkey", key, "--json")
		wantOK(t, r)
		var rep status.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		return rep
	}
	if rep := readStatusJSON(keyOf("ops")); len(rep.Jobs) != 1 || rep.Jobs[0].JobID != "5x4-d10" || len(rep.Workers) != 1 || rep.Workers[0].WorkerID != "lab-1" {
		t.Errorf("status with the observer's key: %+v; want job 5x4-d10 and worker lab-1", rep)
	}

	// A worker's key: refused before it connects.
	r := run(t, "", "status", "--nats", url, "--nkey", keyOf("lab-1"))
	wantErr(t, r, "is worker lab-1's key", "a worker's key cannot read the cluster's status", "--observer", "nats.token", "nats.user")
	// A worker's key whose file claims to be an observer's: the server
	// refuses the reads, and status says so at once.
	data, err := os.ReadFile(keyOf("lab-1"))
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(dir, "forged.nkey")
	if err := os.WriteFile(forged, []byte(strings.ReplaceAll(string(data), "# worker:", "# observer:")), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", "status", "--nats", url, "--nkey", forged)
	wantErr(t, r, "does not let these credentials read the cluster's status", "nats.nkey is set", "--observer", "refused by the server's permissions")
	// An observer's key cannot make a worker.
	wantErr(t, run(t, "", workerArgs(url, "", "--nkey", keyOf("ops"))...), "is observer ops's key", "c4book worker add NAME")

	// While the job runs: an observer added reads at once, one removed
	// is refused.
	r = run(t, "", "worker", "add", "ops-2", "--observer", "--book", bookPath, "--out", keyOf("ops-2"))
	wantOK(t, r)
	if !strings.Contains(r.stdout, "observer ops-2 (number 3) registered") {
		t.Errorf("add while the job runs:\n%s", r.stdout)
	}
	if rep := readStatusJSON(keyOf("ops-2")); len(rep.Jobs) != 1 {
		t.Errorf("status with the added observer's key: %+v", rep)
	}
	r = run(t, "", "worker", "remove", "ops", "--book", bookPath)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "observer ops (number 2) removed") {
		t.Errorf("remove while the job runs:\n%s", r.stdout)
	}
	wantErr(t, run(t, "", "status", "--nats", url, "--nkey", keyOf("ops")), "refused the key of nats.nkey")
	coord.stop()
}
