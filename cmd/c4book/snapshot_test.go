package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
)

// TestBookGet_whileWritten reads a book that a generate job is writing:
// book get answers from the job's snapshot, and says so; once the job
// stops, from the book itself, and the snapshots are gone.
func TestBookGet_whileWritten(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	path := makeBook(t, testBookDepth)
	solved := solvedLines(t, testBookDepth)

	// No worker helps the job: it waits in its solving phase until stopped.
	startJob := func() *bgCommand {
		job := startCommand(t, "generate", "--width=5", "--height=4", "--depth=10", "--book", path,
			"--workers=0", "--listen=127.0.0.1:0", "--task-size=32")
		job.stderr.waitLine(t, "tasks published", job.done)
		return job
	}

	t.Setenv("C4BOOK_BOOK_SNAPSHOT_INTERVAL", "0")
	job := startJob()
	r := bookGet(t, path, solved)
	wantErr(t, r, "being written by another process and has no snapshot yet", "book.snapshot-interval")
	job.stop()

	t.Setenv("C4BOOK_BOOK_SNAPSHOT_INTERVAL", "1s")
	job = startJob()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, err := book.NewestSnapshot(path); err != nil {
			t.Fatal(err)
		} else if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job left no snapshot in 10 s; its stderr:\n%s", job.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	r = bookGet(t, path, solved)
	wantOK(t, r)
	t.Log(strings.TrimSpace(r.stderr))
	if r.stdout != solved {
		t.Errorf("book get of a book being written differs from the lines imported:\n%s", firstDiff(r.stdout, solved))
	}
	if !strings.Contains(r.stderr, "is being written: reading its snapshot of") {
		t.Errorf("book get does not say it reads a snapshot; stderr:\n%s", r.stderr)
	}
	stats := run(t, "", "book", "stats", "--book", path)
	wantOK(t, stats)

	if code := exitCode(job.stop().err); code != 130 {
		t.Fatalf("the job stopped by Ctrl-C: exit code %d, want 130", code)
	}
	if _, err := os.Stat(filepath.Join(path, "snapshots")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshots left after the job closed the book: %v", err)
	}
	r = bookGet(t, path, solved)
	wantOK(t, r)
	if r.stdout != solved || r.stderr != "" {
		t.Errorf("book get of the closed book: stderr %q, output differs:\n%s", r.stderr, firstDiff(r.stdout, solved))
	}
}
