package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/c4book/c4book/books"
	"github.com/c4book/c4book/internal/testaddr"
	"github.com/c4book/c4book/serve"
	"github.com/c4book/c4book/solver"
)

// getAnswer GETs url and decodes its JSON body into v, returning the
// status.
func getAnswer(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %q", url, err, body)
	}
	return resp.StatusCode
}

// TestServe: serve answers from a generated book and, beyond it, from the
// solver, with the message of "c4book solve" for moves that are not a
// position; its metrics move; Ctrl-C ends it without an error.
func TestServe(t *testing.T) {
	t.Parallel()
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	wantOK(t, run(t, "", generateArgs(bookPath, "--depth=6")...))

	addr, metricsAddr := testaddr.Free(t), testaddr.Free(t)
	cmd := startCommand(t, "serve", "--book", bookPath, "--listen", addr, "--metrics", metricsAddr,
		"--solve-timeout=1m", "--solvers=1", testTTSize)
	cmd.stderr.waitLine(t, "Serving book", cmd.done)
	base := "http://" + addr

	var a serve.Answer
	if st := getAnswer(t, base+"/v1/position?moves=33", &a); st != 200 || a.Source != "book" || a.BookDepth != 6 {
		t.Errorf("33: status %d, %+v", st, a)
	}
	solved := run(t, "", "solve", "--width=5", "--height=4", "1234512345")
	wantOK(t, solved)
	if st := getAnswer(t, base+"/v1/position?moves=1234512345", &a); st != 200 || a.Source != "solver" ||
		strings.TrimSpace(solved.stdout) != "1234512345 "+itoa(a.Score) {
		t.Errorf("1234512345 beyond the book: status %d, %+v; solve says %q", st, a, solved.stdout)
	}

	bad := run(t, "", "solve", "--width=5", "--height=4", "3344x")
	var e map[string]string
	if st := getAnswer(t, base+"/v1/position?moves=3344x", &e); st != 400 || !strings.Contains(bad.stderr, e["error"]) || e["error"] == "" {
		t.Errorf("bad moves: status %d, %q; solve said %q", st, e["error"], bad.stderr)
	}

	mfs, err := scrape(metricsAddr)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := metricValue(mfs, "c4book_serve_requests_total", "path", "/v1/position", "code", "200")
	getAnswer(t, base+"/v1/position?moves=3", &a)
	mfs, err = scrape(metricsAddr)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := metricValue(mfs, "c4book_serve_requests_total", "path", "/v1/position", "code", "200")
	if before < 2 || after != before+1 {
		t.Errorf("c4book_serve_requests_total{/v1/position,200}: %v then %v after one more request", before, after)
	}
	if n, _ := metricValue(mfs, "c4book_serve_solved_total"); n < 1 {
		t.Errorf("c4book_serve_solved_total = %v after a position beyond the book", n)
	}

	cmd.cancel()
	if r := cmd.wait(); r.err != nil {
		t.Errorf("Ctrl-C: %v\n%s", r.err, r.stderr)
	}
}

// TestServe_tablesBeyondMemory: serve.solvers tables of solver.tt-size
// that do not fit in memory together are refused at start, naming both
// keys, though each table alone fits: the server would start and be
// killed once enough positions were solved at once.
func TestServe_tablesBeyondMemory(t *testing.T) {
	t.Parallel()
	most := solver.MaxTableBytes()
	if most == 0 {
		t.Skip("the memory of this machine is unknown")
	}
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	wantOK(t, run(t, "", generateArgs(bookPath, "--depth=2")...))
	half := strconv.FormatInt(most/2+1<<20, 10) // one fits, two do not
	cmd := startCommand(t, "serve", "--book", bookPath, "--listen", testaddr.Free(t), "--solvers=2", "--tt-size="+half)
	for {
		cmd.stderr.mu.Lock()
		started, changed := strings.Contains(cmd.stderr.buf.String(), "Serving book"), cmd.stderr.changed
		cmd.stderr.mu.Unlock()
		if started {
			t.Fatalf("serve started with 2 tables of %s bytes, for %d bytes of memory", half, most)
		}
		select {
		case <-changed:
			continue
		case <-cmd.done:
		}
		break
	}
	wantErr(t, cmd.wait(), "serve.solvers: 2 solvers with a table of solver.tt-size", "more than the memory of this machine", "lower serve.solvers, or solver.tt-size to at most")
}

// TestServe_shippedBook: serve with no --book serves the book shipped for
// 7x6 (the deepest): the empty board, with every column scored from the
// book, and the page.
func TestServe_shippedBook(t *testing.T) {
	t.Parallel()
	addr := testaddr.Free(t)
	cmd := startCommand(t, "serve", "--listen", addr, "--solvers=1", testTTSize)
	cmd.stderr.waitLine(t, "Serving book", cmd.done)
	base := "http://" + addr
	shipped, ok, err := books.Deepest(solver.Standard)
	if err != nil || !ok {
		t.Fatalf("no 7x6 book ships: %v", err)
	}
	var a serve.Answer
	if st := getAnswer(t, base+"/v1/position?moves=", &a); st != 200 || a.Source != "book" || a.BookDepth != shipped.Depth || a.Score != 1 {
		t.Fatalf("the empty board: status %d, %+v", st, a)
	}
	var scores []int
	for _, c := range a.Columns {
		if c == nil || c.Source != "book" {
			t.Fatalf("the empty board: column %+v not from the book", c)
		}
		scores = append(scores, c.Score)
	}
	if got := fmt.Sprint(scores); got != "[-2 -1 0 1 0 -1 -2]" {
		t.Errorf("the empty board's columns score %s, want Pons' [-2 -1 0 1 0 -1 -2]", got)
	}
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the page: status %d", resp.StatusCode)
	}
	cmd.cancel()
	if r := cmd.wait(); r.err != nil {
		t.Errorf("Ctrl-C: %v\n%s", r.err, r.stderr)
	}
}
