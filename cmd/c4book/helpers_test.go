package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
)

// testTTSize is the table size the tests use: small, so that clearing it
// before each position costs little.
const testTTSize = "--tt-size=4MiB"

// result is what one Run printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// run runs c4book with args, stdin as standard input, and an environment
// with no C4BOOK_* variable but those the test sets after calling it.
func run(tb testing.TB, stdin string, args ...string) result {
	tb.Helper()
	return runContext(tb, context.Background(), stdin, args...)
}

// runContext is run with a context.
func runContext(tb testing.TB, ctx context.Context, stdin string, args ...string) result {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// TestMain runs the tests with no C4BOOK_* variable of a configuration
// key in the environment, so that what the shell running them holds
// changes nothing. Tests that set no variable run in parallel on that
// environment (a parallel test cannot call t.Setenv); a test that sets one
// (isolateEnv, t.Setenv), or a package variable (registryPoll,
// requestWait), is not parallel: Go runs it before the parallel tests are
// released, and it restores what it set when it ends.
func TestMain(m *testing.M) {
	for _, k := range config.Keys() {
		os.Unsetenv(k.Env)
	}
	os.Exit(m.Run())
}

// isolateEnv empties every C4BOOK_* variable of a configuration key for
// the test (an empty variable counts as unset), for a test that sets some
// after calling it: TestMain has emptied them for all already.
func isolateEnv(t *testing.T) {
	t.Helper()
	for _, k := range config.Keys() {
		t.Setenv(k.Env, "")
	}
}

// testdataDir returns the folder of Pons' reference sets: $C4BOOK_TESTDATA
// or ../../../shared/testdata/pons from this package. It skips the test
// when the folder is absent.
func testdataDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("C4BOOK_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata", "pons")
	}
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("reference sets not found at %s (set C4BOOK_TESTDATA to the folder holding Test_L3_R1 ...): %v", dir, err)
	}
	return dir
}

// refLine is a line of a reference set.
type refLine struct {
	moves string
	score int
}

// String returns the line as written in the set: "moves score".
func (l refLine) String() string { return l.moves + " " + strconv.Itoa(l.score) }

// refLines returns the first n lines of the reference set name.
func refLines(tb testing.TB, name string, n int) []refLine {
	tb.Helper()
	f, err := os.Open(filepath.Join(testdataDir(tb), name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var lines []refLine
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(lines) < n {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			tb.Fatalf("%s: want \"moves score\", got %q", name, sc.Text())
		}
		score, err := strconv.Atoi(fields[1])
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		lines = append(lines, refLine{moves: fields[0], score: score})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return lines
}

// joinLines writes lines one a line.
func joinLines[T any](lines []T, format func(T) string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(format(l))
		b.WriteByte('\n')
	}
	return b.String()
}

// outputLines splits output into its lines, without the final newline.
func outputLines(out string) []string {
	out = strings.TrimSuffix(out, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// wantErr checks that r failed with an error containing each part.
func wantErr(tb testing.TB, r result, parts ...string) {
	tb.Helper()
	if r.err == nil {
		tb.Fatalf("got no error, want one containing %q\nstdout:\n%s\nstderr:\n%s", parts, r.stdout, r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(r.err.Error(), p) {
			tb.Errorf("error %q does not contain %q", r.err, p)
		}
	}
}

// wantOK checks that r succeeded.
func wantOK(tb testing.TB, r result) {
	tb.Helper()
	if r.err != nil {
		tb.Fatalf("error: %v\nstderr:\n%s", r.err, r.stderr)
	}
}

// queueOn connects to the server at url with token, sets the queue up as
// a coordinator would, and closes the connection when the test ends.
func queueOn(t *testing.T, url, token string) *queue.Conn {
	t.Helper()
	conn, err := queue.Connect(context.Background(), queue.Options{URL: url, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.EnsureStreams(context.Background(), queue.StreamConfig{AckWait: 30 * time.Second, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	return conn
}
