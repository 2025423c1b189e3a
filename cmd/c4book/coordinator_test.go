package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// jobArgs are the arguments of the small 5x4 job of generateArgs for
// command, without local workers.
func jobArgs(command, bookPath string, more ...string) []string {
	return append([]string{command, "--width=5", "--height=4", "--depth=10", "--book", bookPath, "--task-size=32"}, more...)
}

// workerArgs are the arguments of a worker of the tests joining url.
func workerArgs(url, id string, more ...string) []string {
	args := []string{"worker", "--nats", url, "--concurrency=2", testTTSize}
	if id != "" {
		args = append(args, "--id", id)
	}
	return append(args, more...)
}

func TestCoordinator_Run(t *testing.T) {
	isolateEnv(t)
	t.Run("listen with a token, a worker joins", func(t *testing.T) {
		t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
		bookPath := filepath.Join(t.TempDir(), "5x4.db")
		coord := startCommand(t, jobArgs("coordinator", bookPath, "--listen=127.0.0.1:0")...)
		line := coord.stdout.waitLine(t, "workers connect to ", coord.done)
		url := line[strings.LastIndex(line, " ")+1:]
		if !strings.HasPrefix(url, "nats://127.0.0.1:") {
			t.Fatalf("URL %q, want nats://127.0.0.1:PORT", url)
		}
		cmdLine := coord.stdout.waitLine(t, "c4book worker --nats", coord.done)
		if want := "C4BOOK_NATS_TOKEN=<nats.token> c4book worker --nats " + url; strings.TrimSpace(cmdLine) != want {
			t.Errorf("worker command line %q, want %q", cmdLine, want)
		}

		w := startCommand(t, workerArgs(url, "w1")...)
		r := coord.wait()
		wantOK(t, r)
		if !strings.Contains(r.stdout, "Job 5x4-d10 complete") || !strings.Contains(r.stdout, "    w1 ") {
			t.Errorf("summary:\n%s", r.stdout)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Errorf("the token is printed:\n%s\n%s", r.stdout, r.stderr)
		}
		checkGeneratedBook(t, bookPath, solver.MustBoard(5, 4), "", 10, 1000)
		wr := w.stop()
		if code := exitCode(wr.err); code != 130 {
			t.Errorf("worker stopped by Ctrl-C: exit code %d (%v), want 130\nstderr:\n%s", code, wr.err, wr.stderr)
		}
	})
	t.Run("listen without authentication is refused", func(t *testing.T) {
		bookPath := filepath.Join(t.TempDir(), "5x4.db")
		r := run(t, "", jobArgs("coordinator", bookPath, "--listen=127.0.0.1:0")...)
		wantErr(t, r, "refusing to listen on 127.0.0.1:0 without authentication", "nats.token", "nats.user and nats.password", "nats.tls.ca")
		if _, err := os.Stat(bookPath); !os.IsNotExist(err) {
			t.Errorf("the refused command made the book: %v", err)
		}
	})
	t.Run("no server", func(t *testing.T) {
		r := run(t, "", jobArgs("coordinator", filepath.Join(t.TempDir(), "b"))...)
		wantErr(t, r, "--nats URL", "--listen HOST:PORT")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
}

func TestCoordinator_failedTasks(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	bookPath := filepath.Join(t.TempDir(), "5x4.db")

	// One delivery a task, held a second: a task taken and never answered
	// is given up on at the next worker's request.
	t.Setenv("C4BOOK_QUEUE_MAX_DELIVER", "1")
	t.Setenv("C4BOOK_QUEUE_ACK_WAIT", "1s")
	coord := startCommand(t, jobArgs("coordinator", bookPath, "--nats", url)...)
	conn, err := queue.Connect(context.Background(), queue.Options{URL: url, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tasks, err := jobproc.WaitForTasks(context.Background(), conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, err := tasks.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := startCommand(t, workerArgs(url, "w1")...)
	r := coord.wait()
	if code := exitCode(r.err); code != 1 {
		t.Fatalf("exit code %d (%v), want 1\nstderr:\n%s", code, r.err, r.stderr)
	}
	wantErr(t, r, "job 5x4-d10 is incomplete", "1 of 1047 tasks failed (each delivered 1 times without a result", "run the same command again")
	if !strings.Contains(r.stdout, "Job 5x4-d10 incomplete") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "failed task ") || !strings.Contains(r.stderr, fmt.Sprintf(" and %d more", len(held.Task.Keys)-3)) {
		t.Errorf("the failed task is not listed:\n%s", r.stderr)
	}

	t.Setenv("C4BOOK_QUEUE_MAX_DELIVER", "")
	r = run(t, "", jobArgs("coordinator", bookPath, "--nats", url)...)
	wantOK(t, r)
	if got := summaryValue(r.stdout, "solved by workers"); got != human.Count(len(held.Task.Keys)) {
		t.Errorf("run again: %s positions solved, want the %d of the failed task\n%s", got, len(held.Task.Keys), r.stdout)
	}
	w.stop()
	checkGeneratedBook(t, bookPath, solver.MustBoard(5, 4), "", 10, 1000)
}
