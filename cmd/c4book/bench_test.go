package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSet writes lines to a file named name in a temporary directory and
// returns its path.
func writeSet(tb testing.TB, name string, lines []string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// refSet returns the reference lines as the lines of a set file.
func refSet(lines []refLine) []string {
	var text []string
	for _, l := range lines {
		text = append(text, l.String())
	}
	return text
}

// benchRow returns the fields of the table row of set in out.
func benchRow(tb testing.TB, out, set string) []string {
	tb.Helper()
	for _, line := range outputLines(out) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == set {
			return f
		}
	}
	tb.Fatalf("no row for %s in\n%s", set, out)
	return nil
}

func TestBench_table(t *testing.T) {
	t.Parallel()
	easy := writeSet(t, "easy", refSet(refLines(t, "Test_L3_R1", 20)))
	medium := writeSet(t, "medium", refSet(refLines(t, "Test_L2_R1", 5)))

	t.Run("all correct", func(t *testing.T) {
		r := run(t, "", "bench", testTTSize, easy, medium)
		wantOK(t, r)
		header := strings.Fields(outputLines(r.stdout)[0])
		if header[0] != "set" || header[1] != "positions" || header[2] != "mismatches" {
			t.Errorf("header %q", header)
		}
		for set, n := range map[string]string{"easy": "20", "medium": "5"} {
			row := benchRow(t, r.stdout, set)
			if len(row) != 7 || row[1] != n || row[2] != "0" {
				t.Errorf("row %q: want %s positions, 0 mismatches and 7 columns", row, n)
			}
		}
		if r.stderr != "" {
			t.Errorf("stderr %q, want nothing (no progress when not a terminal)", r.stderr)
		}
	})
	t.Run("threads", func(t *testing.T) {
		r := run(t, "", "bench", testTTSize, "--threads", "2", easy, medium)
		wantOK(t, r)
		for set, n := range map[string]string{"easy": "20", "medium": "5"} {
			if row := benchRow(t, r.stdout, set); row[1] != n || row[2] != "0" {
				t.Errorf("row %q: want %s positions and 0 mismatches", row, n)
			}
		}
	})
	t.Run("limit", func(t *testing.T) {
		r := run(t, "", "bench", testTTSize, "--limit", "3", easy)
		wantOK(t, r)
		if row := benchRow(t, r.stdout, "easy"); row[1] != "3" {
			t.Errorf("row %q: want 3 positions", row)
		}
	})
}

// TestBench_usage checks the errors found before solving; it needs no
// reference set.
func TestBench_usage(t *testing.T) {
	t.Parallel()
	quick := writeSet(t, "quick", []string{quickPosition + " 0"})
	t.Run("negative limit", func(t *testing.T) {
		r := run(t, "", "bench", "--limit", "-1", quick)
		wantErr(t, r, "--limit -1")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
	t.Run("no threads", func(t *testing.T) {
		r := run(t, "", "bench", "--threads", "0", quick)
		wantErr(t, r, "solver.threads")
	})
	t.Run("no file", func(t *testing.T) {
		r := run(t, "", "bench")
		wantErr(t, r, "requires at least 1 arg")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope")
		r := run(t, "", "bench", testTTSize, quick, missing)
		wantErr(t, r, missing)
		if r.stdout != "" {
			t.Errorf("stdout %q: want no benchmark when a file is missing", r.stdout)
		}
	})
}

// TestBench_cpuProfile checks that --cpuprofile writes a profile (gzip
// compressed, as go tool pprof wants it) and that a file it cannot create
// is an error naming the flag.
func TestBench_cpuProfile(t *testing.T) {
	t.Parallel()
	quick := writeSet(t, "quick", refSet(refLines(t, "Test_L3_R1", 2)))
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	r := run(t, "", "bench", testTTSize, "--cpuprofile", profile, quick)
	wantOK(t, r)
	data, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("profile of %d bytes, starting %x: want gzip data", len(data), data[:min(len(data), 2)])
	}

	unwritable := filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")
	r = run(t, "", "bench", testTTSize, "--cpuprofile", unwritable, quick)
	wantErr(t, r, "--cpuprofile", unwritable)
	if r.stdout != "" {
		t.Errorf("stdout %q: want no benchmark when the profile cannot be written", r.stdout)
	}
}

func TestBench_mismatch(t *testing.T) {
	t.Parallel()
	lines := refLines(t, "Test_L3_R1", 5)
	wrong := lines[2]
	wrong.score++
	set := refSet(lines)
	set[2] = wrong.String()
	file := writeSet(t, "wrong", set)

	r := run(t, "", "bench", testTTSize, file)
	wantErr(t, r, "1 wrong scores")
	if code := exitCode(r.err); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	want := fmt.Sprintf("%s:3: moves %s: got %d, want %d", file, wrong.moves, lines[2].score, wrong.score)
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not contain %q", r.stderr, want)
	}
	if row := benchRow(t, r.stdout, "wrong"); row[1] != "5" || row[2] != "1" {
		t.Errorf("row %q: want 5 positions and 1 mismatch", row)
	}
}

func TestBench_unreadable(t *testing.T) {
	t.Parallel()
	lines := refSet(refLines(t, "Test_L3_R1", 3))
	file := writeSet(t, "bad", []string{lines[0], "4459 1", lines[1], "4453", "", "4453 x", lines[2]})
	r := run(t, "", "bench", testTTSize, file)
	wantErr(t, r, "3 unreadable lines")
	for _, want := range []string{
		file + `:2: moves "4459": move 4 ('9'): column out of range 1..7`,
		file + `:4: want "moves score", got "4453"`,
		file + `:6: score "x" is not an integer`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not contain %q", r.stderr, want)
		}
	}
	if row := benchRow(t, r.stdout, "bad"); row[1] != "3" || row[2] != "0" {
		t.Errorf("row %q: want the 3 good positions solved", row)
	}
}

func TestBench_json(t *testing.T) {
	t.Parallel()
	easy := writeSet(t, "easy", refSet(refLines(t, "Test_L3_R1", 10)))
	medium := writeSet(t, "medium", refSet(refLines(t, "Test_L2_R1", 4)))
	r := run(t, "", "bench", testTTSize, "--json", "--warm", easy, medium)
	wantOK(t, r)
	lines := outputLines(r.stdout)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one JSON object per file:\n%s", len(lines), r.stdout)
	}
	for i, want := range []struct {
		set       string
		positions float64
	}{{"easy", 10}, {"medium", 4}} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &obj); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, lines[i])
		}
		for _, field := range []string{"set", "file", "positions", "mismatches", "unreadable", "mean_ns", "mean_nodes", "kpos_per_sec", "nodes_per_sec", "warm"} {
			if _, ok := obj[field]; !ok {
				t.Errorf("line %d: no field %q: %s", i+1, field, lines[i])
			}
		}
		if obj["set"] != want.set || obj["positions"] != want.positions || obj["mismatches"] != 0.0 || obj["warm"] != true {
			t.Errorf("line %d: %s: want set %s, %v positions, 0 mismatches, warm", i+1, lines[i], want.set, want.positions)
		}
		if ns, nodes := obj["mean_ns"].(float64), obj["mean_nodes"].(float64); ns <= 0 || nodes < 1 {
			t.Errorf("line %d: mean_ns %v, mean_nodes %v: want positive", i+1, ns, nodes)
		}
		if _, ok := obj["interrupted"]; ok {
			t.Errorf("line %d: interrupted set on a complete run", i+1)
		}
	}
}

func TestBench_interrupted(t *testing.T) {
	t.Parallel()
	file := writeSet(t, "quick", []string{quickPosition + " 0"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runContext(t, ctx, "", "bench", testTTSize, "--json", file)
	if !errors.Is(r.err, errInterrupted) {
		t.Fatalf("error %v, want errInterrupted", r.err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	if obj["interrupted"] != true || obj["positions"] != 0.0 {
		t.Errorf("got %s, want an interrupted result with 0 positions", r.stdout)
	}
}
