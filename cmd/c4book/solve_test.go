package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refInput returns the first lines of two easy reference sets.
func refInput(tb testing.TB) []refLine {
	tb.Helper()
	return append(refLines(tb, "Test_L3_R1", 30), refLines(tb, "Test_L2_R1", 10)...)
}

func TestSolve_stdin(t *testing.T) {
	t.Parallel()
	t.Run("reference lines", func(t *testing.T) {
		lines := refInput(t)
		r := run(t, joinLines(lines, refLine.String), "solve", testTTSize)
		wantOK(t, r)
		got := outputLines(r.stdout)
		if len(got) != len(lines) {
			t.Fatalf("%d output lines, want %d:\n%s", len(got), len(lines), r.stdout)
		}
		for i, l := range lines {
			if got[i] != l.String() {
				t.Errorf("line %d: got %q, want %q (Pons' score)", i+1, got[i], l.String())
			}
		}
	})
	t.Run("moves only, spaces and blank lines", func(t *testing.T) {
		lines := refLines(t, "Test_L3_R1", 3)
		in := "  " + lines[0].moves + "  \n\n \t \n" + lines[1].moves + "\r\n" + lines[2].moves
		r := run(t, in, "solve", testTTSize)
		wantOK(t, r)
		if want := joinLines(lines, refLine.String); r.stdout != want {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
		}
	})
	t.Run("empty input", func(t *testing.T) {
		r := run(t, "", "solve", testTTSize)
		wantOK(t, r)
		if r.stdout != "" {
			t.Errorf("got %q, want no output", r.stdout)
		}
	})
}

func TestSolve_invalidLines(t *testing.T) {
	t.Parallel()
	lines := refLines(t, "Test_L3_R1", 3)
	long := strings.Repeat("12", 50000) // 100 kB
	in := strings.Join([]string{lines[0].String(), "4459", lines[1].moves, "1 2 3", "  ", "12x", "# a comment", long, lines[2].String(), "12121212 5"}, "\n")
	r := run(t, in, "solve", testTTSize)
	wantErr(t, r, "5 of 8 lines are not positions")
	if want := joinLines(lines, refLine.String); r.stdout != want {
		t.Errorf("the good lines were not all answered: got\n%s\nwant\n%s", r.stdout, want)
	}
	for _, want := range []string{
		`line 2: moves "4459": move 4 ('9'): column out of range 1..7`,
		`line 4: want "moves" or "moves score", got "1 2 3"`,
		`line 6: moves "12x": move 3 ('x'): not a column digit`,
		`line 8: longer than 4096 bytes, not a position: "1212121212121212121212121212121212121212"...`,
		`line 10: moves "12121212": move 8 ('2'): game already over: move 7 made four`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
		}
	}
	if len(r.stderr) > 2000 {
		t.Errorf("stderr is %d bytes: a long line is quoted whole", len(r.stderr))
	}
	if code := exitCode(r.err); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestSolve_args(t *testing.T) {
	t.Parallel()
	t.Run("reference positions", func(t *testing.T) {
		lines := refLines(t, "Test_L2_R1", 5)
		args := []string{"solve", testTTSize}
		for _, l := range lines {
			args = append(args, l.moves)
		}
		r := run(t, "", args...)
		wantOK(t, r)
		if want := joinLines(lines, refLine.String); r.stdout != want {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
		}
	})
	t.Run("bad argument", func(t *testing.T) {
		lines := refLines(t, "Test_L3_R1", 1)
		r := run(t, "", "solve", testTTSize, "0", lines[0].moves)
		wantErr(t, r, "1 of 2 arguments are not positions")
		if !strings.Contains(r.stderr, `argument 1: moves "0": move 1 ('0'): column out of range 1..7`) {
			t.Errorf("stderr: %s", r.stderr)
		}
		if r.stdout != lines[0].String()+"\n" {
			t.Errorf("stdout %q, want the good argument answered", r.stdout)
		}
	})
	t.Run("empty board", func(t *testing.T) {
		// The 4x4 board is a draw and small enough to solve at once.
		r := run(t, "-\n", "solve", "--width=4", "--height=4")
		wantOK(t, r)
		if r.stdout != "- 0\n" {
			t.Errorf("stdin \"-\": got %q, want \"- 0\\n\"", r.stdout)
		}
		r = run(t, "", "solve", "--width=4", "--height=4", "", "-")
		wantOK(t, r)
		if r.stdout != "- 0\n- 0\n" {
			t.Errorf(`arguments "" and "-": got %q, want "- 0\n- 0\n"`, r.stdout)
		}
	})
	t.Run("spaces around an argument", func(t *testing.T) {
		r := run(t, "", "solve", "--width=4", "--height=4", " 12 ")
		wantOK(t, r)
		if r.stdout != "12 0\n" {
			t.Errorf(`argument " 12 ": got %q, want "12 0\n", as the line " 12 " is read`, r.stdout)
		}
	})
	t.Run("finished game", func(t *testing.T) {
		r := run(t, "1212121\n", "solve", testTTSize)
		wantOK(t, r)
		if r.stdout != "1212121 -18\n" || !strings.Contains(r.stderr, "1212121: the game is over: the last move made four") {
			t.Errorf("stdout %q, stderr %q: want the score of the lost game, and a note that the game is over", r.stdout, r.stderr)
		}
	})
}

func TestSolve_weak(t *testing.T) {
	t.Parallel()
	lines := refInput(t)
	r := run(t, joinLines(lines, refLine.String), "solve", "-w", testTTSize)
	wantOK(t, r)
	got := outputLines(r.stdout)
	if len(got) != len(lines) {
		t.Fatalf("%d output lines, want %d", len(got), len(lines))
	}
	for i, l := range lines {
		want := fmt.Sprintf("%s %d", l.moves, sign(l.score))
		if got[i] != want {
			t.Errorf("line %d: got %q, want %q", i+1, got[i], want)
		}
	}
}

func TestSolve_analyze(t *testing.T) {
	t.Parallel()
	t.Run("agrees with the reference", func(t *testing.T) {
		// Solve -a on the position before the last move of each reference
		// line: the column of that move scores minus the reference score,
		// full columns score -1000, and the best column's score is the
		// position's score.
		lines := refLines(t, "Test_L3_R1", 10)
		var parents []string
		for _, l := range lines {
			parents = append(parents, l.moves[:len(l.moves)-1])
		}
		r := run(t, strings.Join(parents, "\n"), "solve", "-a", testTTSize)
		wantOK(t, r)
		s := run(t, strings.Join(parents, "\n"), "solve", testTTSize)
		wantOK(t, s)
		got, exact := outputLines(r.stdout), outputLines(s.stdout)
		if len(got) != len(lines) || len(exact) != len(lines) {
			t.Fatalf("got %d and %d lines, want %d", len(got), len(exact), len(lines))
		}
		fullSeen := false
		for i, l := range lines {
			fields := strings.Fields(got[i])
			if len(fields) != 8 || fields[0] != parents[i] {
				t.Fatalf("line %d: got %q, want the moves and 7 scores", i+1, got[i])
			}
			col := int(l.moves[len(l.moves)-1] - '0')
			if want := strconv.Itoa(-l.score); fields[col] != want {
				t.Errorf("line %d: %s column %d scores %s, want %s", i+1, parents[i], col, fields[col], want)
			}
			for c := 1; c <= 7; c++ {
				full := strings.Count(parents[i], strconv.Itoa(c)) == 6
				if full != (fields[c] == "-1000") {
					t.Errorf("line %d: %s column %d (full: %v) scores %s", i+1, parents[i], c, full, fields[c])
				}
				fullSeen = fullSeen || full
			}
			best := -1000
			for _, f := range fields[1:] {
				v, _ := strconv.Atoi(f)
				best = max(best, v)
			}
			if want := strings.Fields(exact[i])[1]; strconv.Itoa(best) != want {
				t.Errorf("line %d: best column scores %d, solve says %s", i+1, best, want)
			}
		}
		if !fullSeen {
			t.Error("no position with a full column was checked")
		}
	})
	t.Run("with -w is a usage error", func(t *testing.T) {
		r := run(t, "", "solve", "-a", "-w", "4")
		wantErr(t, r, "cannot be used together")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
}

func TestSolve_config(t *testing.T) {
	isolateEnv(t)
	file := filepath.Join(t.TempDir(), "c4book.yaml")
	if err := os.WriteFile(file, []byte("board:\n  width: 4\n  height: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("file sets the board", func(t *testing.T) {
		r := run(t, "", "solve", "--config", file, "5")
		wantErr(t, r, "1 of 1 arguments are not positions")
		if !strings.Contains(r.stderr, "column out of range 1..4") {
			t.Errorf("stderr %q: want a 4-column board", r.stderr)
		}
	})
	t.Run("env overrides file", func(t *testing.T) {
		t.Setenv("C4BOOK_BOARD_WIDTH", "5")
		wantOK(t, run(t, "", "solve", "--config", file, "5"))
	})
	t.Run("flag overrides env", func(t *testing.T) {
		t.Setenv("C4BOOK_BOARD_WIDTH", "5")
		r := run(t, "", "solve", "--config", file, "--width", "4", "5")
		wantErr(t, r, "not positions")
	})
	t.Run("bad tt-size from env", func(t *testing.T) {
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "64XB")
		r := run(t, "", "solve", "1")
		wantErr(t, r, `solver.tt-size: "64XB" is not a size (use bytes or a suffix KiB, MiB, GiB, KB, MB, GB)`, "C4BOOK_SOLVER_TT_SIZE")
	})
	t.Run("--tt-size overrides env", func(t *testing.T) {
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "64XB")
		wantOK(t, run(t, "", "solve", "--tt-size", "1MiB", quickPosition))
	})
	t.Run("tt-size from env", func(t *testing.T) {
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "512")
		wantErr(t, run(t, "", "solve", "1"), "solver.tt-size: 512 is too small: must be at least 1KiB (set by environment variable C4BOOK_SOLVER_TT_SIZE)")
	})
	t.Run("bad --tt-size", func(t *testing.T) {
		wantErr(t, run(t, "", "solve", "--tt-size", "64XB", "1"), `solver.tt-size: "64XB" is not a size`, "flag --tt-size")
	})
	t.Run("table too small for the board", func(t *testing.T) {
		wantErr(t, run(t, "", "solve", "--tt-size", "1KiB", "--width", "9", "1"), "solver.tt-size: table size 1024 bytes: board 9x6 needs")
	})
	t.Run("bad --width", func(t *testing.T) {
		wantErr(t, run(t, "", "solve", "--width", "12", "1"), "board.width: 12 is out of range: width must be 1..9", "flag --width")
	})
	t.Run("--width not a number", func(t *testing.T) {
		r := run(t, "", "solve", "--width", "wide", "1")
		wantErr(t, r, `invalid argument "wide" for "--width"`, "c4book solve --help")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
	t.Run("missing --config file", func(t *testing.T) {
		wantErr(t, run(t, "", "solve", "--config", file+".missing", "1"), "config file "+file+".missing")
	})
}

// quickPosition is a 7x6 position solved in a moment: the first line of
// Test_L3_R1.
const quickPosition = "2252576253462244111563365343671351441"

// sign is the weak score of a score.
func sign(score int) int {
	switch {
	case score > 0:
		return 1
	case score < 0:
		return -1
	}
	return 0
}

func TestSolve_interrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.Run("during a search", func(t *testing.T) {
		// "4" takes far longer than the test to solve without the
		// shipped book: the search must stop when the context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		r := runContext(t, ctx, "", "solve", "--no-book", "4")
		if !errors.Is(r.err, errInterrupted) || r.stdout != "" {
			t.Errorf("error %v, stdout %q; want errInterrupted and no answer", r.err, r.stdout)
		}
	})
	for _, args := range [][]string{{"solve"}, {"solve", quickPosition}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runContext(t, ctx, quickPosition+"\n", args...)
			if !errors.Is(r.err, errInterrupted) {
				t.Errorf("error %v, want errInterrupted", r.err)
			}
			if code := exitCode(r.err); code != 130 {
				t.Errorf("exit code %d, want 130", code)
			}
		})
	}
}
