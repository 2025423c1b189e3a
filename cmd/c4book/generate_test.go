package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// generateArgs are the arguments of a small generation job on 5x4 (79,038
// positions to depth 10, about a second of solving) with its book at
// bookPath.
func generateArgs(bookPath string, more ...string) []string {
	return append([]string{"generate", "--width=5", "--height=4", "--depth=10", "--book", bookPath, "--workers=2", "--task-size=32", testTTSize}, more...)
}

func TestGenerate_Run(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	ok := t.Run("builds the book", func(t *testing.T) {
		r := run(t, "", generateArgs(bookPath)...)
		wantOK(t, r)
		n := checkGeneratedBook(t, bookPath, b, "", 10, 400)
		if got := summaryValue(r.stdout, "positions"); got != human.Count(n) {
			t.Errorf("summary: %s positions, want %d", got, n)
		}
		for _, want := range []string{
			"Job 5x4-d10 complete: book " + bookPath,
			"in the book before", "solved by workers", "scored at once", "derived", "wall time", "nodes", "positions solved/s", "by worker:",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the summary has no %q:\n%s", want, r.stdout)
			}
		}
		if _, err := os.Stat(filepath.Join(bookPath, jobproc.StoreDirName)); err != nil {
			t.Errorf("the embedded server's data is not inside the book: %v", err)
		}
	})
	if !ok {
		return
	}
	t.Run("run again: nothing to do", func(t *testing.T) {
		r := run(t, "", generateArgs(bookPath)...)
		wantOK(t, r)
		if want := "Job 5x4-d10 is already complete in " + bookPath + " (79,038 positions): nothing to do.\n"; r.stdout != want {
			t.Errorf("got %q, want %q", r.stdout, want)
		}
	})
	t.Run("a shallower job of the same book", func(t *testing.T) {
		r := run(t, "", "generate", "--width=5", "--height=4", "--depth=6", "--book", bookPath, "--workers=1", testTTSize)
		wantOK(t, r)
		if !strings.Contains(r.stdout, "Job 5x4-d6 complete") || summaryValue(r.stdout, "solved by workers") != "0" {
			t.Errorf("a job the book already holds solved positions:\n%s", r.stdout)
		}
	})
}

// summaryValue returns the value of the summary line labelled label, ""
// if there is none.
func summaryValue(out, label string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "  "+label+" "); ok && strings.HasPrefix(rest, " ") {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// cancelOn is a writer that calls cancel once a write contains text.
type cancelOn struct {
	w      io.Writer
	text   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return c.w.Write(p)
}

func TestGenerate_interrupt(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	bookPath := filepath.Join(t.TempDir(), "5x4.db")

	// Ctrl-C as soon as the tasks are published: the coordinator logs it
	// from its own goroutine, so the job is cancelled before it collects.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr strings.Builder
	err := Run(ctx, generateArgs(bookPath), strings.NewReader(""), &stdout, &cancelOn{w: &stderr, text: "tasks published", cancel: cancel})
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit code %d (%v), want 130\nstderr:\n%s", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Run the same command again to resume") {
		t.Errorf("no word on resuming:\n%s", stderr.String())
	}

	r := run(t, "", generateArgs(bookPath)...)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Job 5x4-d10 complete") {
		t.Errorf("the job run again did not complete:\n%s", r.stdout)
	}
	if before := summaryValue(r.stdout, "in the book before"); before == "0" || before == "" {
		t.Errorf("the resumed run found nothing in the book (the positions scored at once were written before the interruption):\n%s", r.stdout)
	}
	checkGeneratedBook(t, bookPath, b, "", 10, 1000)
}

func TestGenerate_errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no worker at all", []string{"generate", "--book", filepath.Join(dir, "a"), "--workers=0"}, 2, []string{"--workers 0", "no worker could ever solve"}},
		{"negative workers", []string{"generate", "--book", filepath.Join(dir, "b"), "--workers=-1"}, 2, []string{"--workers -1"}},
		{"depth beyond the board", []string{"generate", "--book", filepath.Join(dir, "c"), "--depth=43"}, 1, []string{"generate.depth", "43"}},
		{"bad root", []string{"generate", "--book", filepath.Join(dir, "d"), "--root=4448"}, 1, []string{"generate.root", "4448"}},
		{"url and listen", []string{"generate", "--book", filepath.Join(dir, "e"), "--nats=nats://127.0.0.1:1", "--listen=127.0.0.1:0"}, 1, []string{"nats.url", "nats.listen"}},
		{"book of another board", []string{"generate", "--width=5", "--height=4", "--book", filepath.Join(dir, "f"), "--depth=2", "--workers=1", testTTSize}, 0, nil},
		{"book in a directory that does not exist", []string{"generate", "--book", filepath.Join(dir, "typo", "g"), "--depth=2", "--workers=1", testTTSize}, 1, []string{"the directory " + filepath.Join(dir, "typo") + " does not exist"}},
		{"book of another board, again", []string{"generate", "--book", filepath.Join(dir, "f"), "--depth=2", "--workers=1", testTTSize}, 1, []string{"5x4", "7x6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", c.args...)
			if code := exitCode(r.err); code != c.code {
				t.Fatalf("exit code %d (%v), want %d\nstderr:\n%s", code, r.err, c.code, r.stderr)
			}
			if c.code != 0 {
				wantErr(t, r, c.want...)
			}
		})
	}
}

func TestGenerate_externalServer(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	r := run(t, "", generateArgs(bookPath, "--nats", url, "--depth=8")...)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Job 5x4-d8 complete") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(bookPath, jobproc.StoreDirName)); !os.IsNotExist(err) {
		t.Errorf("an embedded server stored data although --nats was given: %v", err)
	}
	checkGeneratedBook(t, bookPath, solver.MustBoard(5, 4), "", 8, 500)
}

// TestGenerate_crossCheck: a job whose only worker is its own does not
// cross-check (nobody to check it against) and its summary says so; the
// summary's lines of cross-checks skipped and positions solved again; a
// fraction out of range is refused.
func TestGenerate_crossCheck(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	r := run(t, "", "generate", "--width=5", "--height=4", "--depth=8", "--root=33", "--book", bookPath, "--workers=2", "--task-size=8", "--cross-check=1", testTTSize)
	wantOK(t, r)
	checkGeneratedBook(t, bookPath, b, "33", 8, 200)
	if got := summaryValue(r.stdout, "cross-checks"); got != "skipped" || !strings.Contains(r.stdout, "the only worker is this process's") || strings.Contains(r.stdout, "cross-checked tasks") {
		t.Errorf("the summary does not say that the cross-checks were skipped:\n%s", r.stdout)
	}
	if def := config.Default().Queue.CrossCheck; def != coordinator.DefaultCrossCheck {
		t.Errorf("queue.cross-check defaults to %v, coordinator.DefaultCrossCheck is %v", def, coordinator.DefaultCrossCheck)
	}
	bad := run(t, "", "generate", "--width=5", "--height=4", "--depth=8", "--book", bookPath, "--cross-check=2")
	wantErr(t, bad, "queue.cross-check: 2 is out of range")
}
