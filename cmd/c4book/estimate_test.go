package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEstimate: estimate plans a job, measures a sample of its leaves and
// ends with one JSON object of its figures; the job then run with
// generate on the same book finds its plan made, and says so. Allowed to
// (the default --solve-under), estimate solves a job this small whole:
// its CPU measured, its scores in the book, and generate solves nothing.
func TestEstimate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.db")
	args := append([]string{"estimate", "--depth", "8", "--root", "33", "--book", path, "--task-size", "8", "--seed", "1", "--json", testTTSize}, testBoardFlags...)
	r := run(t, "", append(args, "--solve-under", "0")...)
	wantOK(t, r)
	t.Logf("\n%s", r.stdout)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got struct {
		Leaves, Tasks int64
		CPU           float64          `json:"cpu_seconds"`
		Low           float64          `json:"cpu_seconds_low"`
		High          float64          `json:"cpu_seconds_high"`
		Wall          map[string]int64 `json:"wall_seconds"`
		Whole         bool             `json:"solved_whole"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line is not the JSON object: %v", err)
	}
	if got.Leaves == 0 || got.Tasks != (got.Leaves+7)/8 || got.CPU <= 0 || got.Low > got.CPU || got.High < got.CPU || len(got.Wall) != 4 || got.Whole {
		t.Errorf("figures %+v", got)
	}
	if !strings.Contains(r.stdout, "the plan is kept in the book for the job") || !strings.Contains(r.stdout, "CPU to solve: ") || !strings.Contains(r.stdout, "times the job's warmth") {
		t.Errorf("output:\n%s", r.stdout)
	}
	g := run(t, "", append([]string{"generate", "--depth", "8", "--root", "33", "--book", path, "--task-size", "8", "--workers", "1", testTTSize}, testBoardFlags...)...)
	wantOK(t, g)
	if !strings.Contains(g.stdout, "complete") {
		t.Errorf("generate after estimate:\n%s", g.stdout)
	}
	// The log does not count as none what estimate's planning scored.
	if !strings.Contains(g.stderr, "planned before (by estimate") || strings.Contains(g.stderr, "scored_at_once") {
		t.Errorf("generate's log after estimate:\n%s", g.stderr)
	}
	if regexp.MustCompile(`solved by workers\s+0\n`).MatchString(g.stdout) {
		t.Errorf("generate after a sample solved nothing:\n%s", g.stdout)
	}
	wantErr(t, run(t, "", "estimate", "--sample", "0", "--book", path), "--sample 0")

	path = filepath.Join(t.TempDir(), "whole.db")
	args[6] = path
	r = run(t, "", args...)
	wantOK(t, r)
	t.Logf("\n%s", r.stdout)
	lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line is not the JSON object: %v", err)
	}
	if !got.Whole || got.CPU <= 0 || got.Low != got.CPU || got.High != got.CPU {
		t.Errorf("a small job: figures %+v, want it solved whole", got)
	}
	if !strings.Contains(r.stdout, "measured: the sample predicted") || !strings.Contains(r.stdout, "only derives") {
		t.Errorf("output:\n%s", r.stdout)
	}
	g = run(t, "", append([]string{"generate", "--depth", "8", "--root", "33", "--book", path, "--task-size", "8", "--workers", "1", testTTSize}, testBoardFlags...)...)
	wantOK(t, g)
	if !strings.Contains(g.stdout, "complete") || !regexp.MustCompile(`solved by workers\s+0\n`).MatchString(g.stdout) {
		t.Errorf("generate after a job solved whole by estimate:\n%s", g.stdout)
	}
}

// TestEstimate_noBook: without --book, estimate plans in a temporary book
// it removes, says so, and leaves nothing in the working directory.
func TestEstimate_noBook(t *testing.T) {
	// Not parallel: it looks at the working directory.
	before, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, "", append([]string{"estimate", "--depth", "6", "--root", "33", "--seed", "1", testTTSize}, testBoardFlags...)...)
	wantOK(t, r)
	if !strings.Contains(r.stderr, "No --book: the plan goes into a temporary book") || !strings.Contains(r.stdout, "the plan is not kept") ||
		strings.Contains(r.stdout, "scores are in the book") {
		t.Errorf("estimate without --book:\n%s\n%s", r.stdout, r.stderr)
	}
	tmp := regexp.MustCompile(`temporary book, (\S+),`).FindStringSubmatch(r.stderr)
	if tmp == nil {
		t.Fatalf("the temporary book is not named:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Dir(tmp[1])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary book %s is left behind: %v", tmp[1], err)
	}
	after, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("estimate without --book left %d files in the working directory, had %d", len(after), len(before))
	}
}
