package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/internal/testaddr"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

func TestWorker_Run(t *testing.T) {
	isolateEnv(t)
	url := testServer(t, "right")
	t.Run("wrong token", func(t *testing.T) {
		t.Setenv("C4BOOK_NATS_TOKEN", "wrong")
		r := run(t, "", workerArgs(url, "w1")...)
		wantErr(t, r, "the server at "+url+" refused the credentials", "nats.token is set")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("no token", func(t *testing.T) {
		r := run(t, "", workerArgs(url, "w1")...)
		wantErr(t, r, "the server at "+url+" needs credentials and none are set", "nats.token")
	})
	t.Run("no URL", func(t *testing.T) {
		r := run(t, "", "worker")
		wantErr(t, r, "--nats URL (nats.url) is required")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
	t.Run("no server there: waits, leaves when idle", func(t *testing.T) {
		r := run(t, "", workerArgs("nats://127.0.0.1:1", "w1", "--exit-when-idle=300ms")...)
		wantOK(t, r)
		for _, want := range []string{`msg="waiting for the NATS server (nats.url)"`, "connect to nats://127.0.0.1:1: no server answers", "No NATS server answered within 300ms: leaving."} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr has no %q:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("TLS authority file missing: fails at once", func(t *testing.T) {
		// Not a server that does not answer: waiting does not bring the
		// file.
		missing := filepath.Join(t.TempDir(), "ca.pem")
		t.Setenv("C4BOOK_NATS_TLS_CA", missing)
		r := run(t, "", workerArgs("tls://127.0.0.1:1", "w1", "--exit-when-idle=10s")...)
		wantErr(t, r, "nats.tls.ca: "+missing+": no such file or directory")
		if code := exitCode(r.err); code != 1 || strings.Contains(r.stderr, "waiting for") {
			t.Errorf("exit code %d, want 1 without waiting; stderr:\n%s", code, r.stderr)
		}
	})
	t.Run("no server there: Ctrl-C", func(t *testing.T) {
		w := startCommand(t, workerArgs("nats://127.0.0.1:1", "w1")...)
		w.stderr.waitLine(t, "waiting for the NATS server", w.done)
		r := w.stop()
		if code := exitCode(r.err); code != 130 {
			t.Errorf("exit code %d (%v), want 130", code, r.err)
		}
	})
	t.Run("waits for a coordinator, leaves when idle", func(t *testing.T) {
		t.Setenv("C4BOOK_NATS_TOKEN", "right")
		r := run(t, "", workerArgs(url, "w1", "--exit-when-idle=500ms")...)
		wantOK(t, r)
		for _, want := range []string{"Connected to " + url, "waiting for a coordinator", "No coordinator set up the queue within 500ms: leaving."} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr has no %q:\n%s", want, r.stderr)
			}
		}
	})
}

// TestWorker_serverLate: a worker started before its server waits for
// it, then solves the tasks of a job run once the server is up.
func TestWorker_serverLate(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	// Its progress, often enough to be seen in a short job.
	defer func(d time.Duration) { workerProgressText = d }(workerProgressText)
	workerProgressText = 200 * time.Millisecond
	addr := testaddr.Free(t)
	url := "nats://" + addr
	w := startCommand(t, workerArgs(url, "w1")...)
	w.stderr.waitLine(t, `msg="waiting for the NATS server (nats.url)"`, w.done)

	testServerAt(t, addr, "s3cret")
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	r := run(t, "", jobArgs("coordinator", bookPath, "--nats", url)...)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Job 5x4-d10 complete") || !strings.Contains(r.stdout, "    w1 ") {
		t.Errorf("the summary does not show w1 solving:\n%s", r.stdout)
	}
	if got := summaryValue(r.stdout, "solved by workers"); got == "" || got == "0" {
		t.Errorf("%q positions solved by workers, want some:\n%s", got, r.stdout)
	}
	checkGeneratedBook(t, bookPath, solver.MustBoard(5, 4), "", 10, 1000)
	wr := w.stop()
	if code := exitCode(wr.err); code != 130 {
		t.Errorf("worker stopped by Ctrl-C: exit code %d (%v), want 130\nstderr:\n%s", code, wr.err, wr.stderr)
	}
	if !strings.Contains(wr.stderr, "Connected to "+url) {
		t.Errorf("the worker does not say it connected:\n%s", wr.stderr)
	}
	// What it did, as it did it, then that it waits.
	if !regexp.MustCompile(`msg=solving .*job=5x4-d10 tasks=\d+ positions=[\d,]+ rate=[\d.,]+/s`).MatchString(wr.stderr) ||
		!strings.Contains(wr.stderr, `msg="no task: waiting for one"`) {
		t.Errorf("the worker's progress is not in its log:\n%s", wr.stderr)
	}
}

// TestWorker_stop: a worker stopped by Ctrl-C while it solves hands its
// task back and exits with status 130, logging no warning.
func TestWorker_stop(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	ctx := context.Background()
	conn := queueOn(t, url, "s3cret")
	// The empty board: minutes of solving, stopped within a second.
	empty, _ := solver.Standard.Parse("")
	if err := conn.PublishTasks(ctx, []queue.Task{{JobID: "7x6-d0", TaskID: 1, Width: 7, Height: 6, Keys: []uint64{empty.Key()}}}); err != nil {
		t.Fatal(err)
	}

	w := startCommand(t, workerArgs(url, "w1", "--concurrency=1", "--log-level=debug")...)
	// In the worker's hands: the server's count of tasks delivered says
	// less (a task in flight to a worker being stopped is dropped by its
	// client, and waits out its AckWait).
	w.stderr.waitLine(t, "task taken", w.done)
	r := w.stop()
	if code := exitCode(r.err); code != 130 {
		t.Errorf("exit code %d (%v), want 130", code, r.err)
	}
	if !strings.Contains(r.stderr, "interrupted: task handed back") {
		t.Errorf("stderr does not say the task was handed back:\n%s", r.stderr)
	}
	for _, line := range outputLines(r.stderr) {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("logged when stopped by Ctrl-C: %s", line)
		}
	}
}

// TestConnectedLine: the worker's first line says that its threads share
// one table, not that each has its own.
func TestConnectedLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "Connected to nats://h:4222: 1 solving thread, with a table of 64MiB."},
		{8, "Connected to nats://h:4222: 8 solving threads, sharing one table of 64MiB."},
	} {
		if got := connectedLine("nats://h:4222", c.n, 64<<20); got != c.want {
			t.Errorf("%d threads: got %q, want %q", c.n, got, c.want)
		}
	}
}

// TestWorker_manners: a worker outside its hours pauses as soon as it has a
// queue, says so in its log and in status, and takes no task; --max-cpu
// bounds its threads; bad values of the manners' keys are refused, named.
func TestWorker_manners(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	// A window of one minute, two hours from now: outside it.
	from := time.Now().Add(2 * time.Hour)
	hours := from.Format("15:04") + "-" + from.Add(time.Minute).Format("15:04")
	w := startCommand(t, workerArgs(url, "w1", "--hours", hours, "--max-cpu", "50%")...)
	w.stderr.waitLine(t, "Connected to", w.done)
	coord := startCommand(t, jobArgs("coordinator", filepath.Join(t.TempDir(), "5x4.db"), "--nats", url)...)
	w.stderr.waitLine(t, `msg="paused: tasks handed back, none taken"`, w.done)
	// The worker paused before the coordinator made the status bucket:
	// it stores its status at its next poll once the bucket is there.
	coord.stderr.waitLine(t, "tasks published", coord.done)
	paused := "Worker w1 is paused: outside the hours " + hours + "."
	var r result
	for deadline := time.Now().Add(time.Minute); ; {
		r = run(t, "", "status", "--nats", url)
		wantOK(t, r)
		if strings.Contains(r.stdout, paused) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(r.stdout, paused) {
		t.Errorf("status does not say w1 is paused, a minute after the job began:\n%s", r.stdout)
	}
	coord.stop()
	wr := w.stop()
	if !strings.Contains(wr.stderr, "Connected to "+url+": 1 solving thread") {
		t.Errorf("--max-cpu 50%% of 2 threads: not 1 thread:\n%s", wr.stderr)
	}
	if strings.Contains(wr.stderr, "msg=solving") {
		t.Errorf("a paused worker solved:\n%s", wr.stderr)
	}
	for _, bad := range [][]string{{"--max-cpu", "0"}, {"--max-cpu", "150%"}, {"--hours", "25:00-01:00"}, {"--pause-when-busy", "101"}} {
		wantErr(t, run(t, "", workerArgs(url, "w2", bad...)...), "worker."+strings.TrimPrefix(bad[0], "--"))
	}
}
