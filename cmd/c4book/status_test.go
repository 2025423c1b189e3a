package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
			{"WORKER", "HOST", "SOLVED", "TASKS", "RATE/S", "BUSY", "JOB", "LAST", "SEEN"},
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
		var rep statusReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		if len(rep.Jobs) != 1 || rep.Jobs[0].JobID != "5x4-d10" || rep.Jobs[0].State != "done" || rep.Jobs[0].Done != rep.Jobs[0].Total || rep.Jobs[0].Total == 0 {
			t.Errorf("jobs: %+v", rep.Jobs)
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
		var rep statusReport
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
	isolateEnv(t)
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
