package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/solver"
)

// bookGet runs "c4book book get --book path args..." with stdin.
func bookGet(tb testing.TB, path, stdin string, args ...string) result {
	tb.Helper()
	return run(tb, stdin, append([]string{"book", "get", "--book", path, testTTSize}, args...)...)
}

func TestBookGet_stdin(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	solved := solvedLines(t, testBookDepth)
	t.Run("round trip of the solve output", func(t *testing.T) {
		r := bookGet(t, path, solved)
		wantOK(t, r)
		if r.stdout != solved {
			t.Errorf("book get of the imported lines differs from them:\n%s", firstDiff(r.stdout, solved))
		}
	})
	t.Run("moves only, spaces, tabs and blank lines", func(t *testing.T) {
		lines := outputLines(solved)[:4]
		var in strings.Builder
		for i, l := range lines {
			moves, _, _ := strings.Cut(l, " ")
			fmt.Fprintf(&in, "%s%s\t\r\n\n  \n", strings.Repeat(" ", i), moves)
		}
		r := bookGet(t, path, in.String())
		wantOK(t, r)
		if want := strings.Join(lines, "\n") + "\n"; r.stdout != want {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
		}
	})
	t.Run("missing positions", func(t *testing.T) {
		deeper := positionsAt(testBoard, testBookDepth+1)[:3]
		in := deeper[0] + "\n- 7\n" + deeper[1] + " 3\n" + deeper[2]
		r := bookGet(t, path, in)
		wantOK(t, r)
		want := fmt.Sprintf("%s ?\n- 0\n%s ?\n%s ?\n", deeper[0], deeper[1], deeper[2])
		if r.stdout != want {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
		}
	})
	t.Run("missing positions solved with --solve", func(t *testing.T) {
		deeper := positionsAt(testBoard, testBookDepth+2)
		deeper = append(deeper[:20], "1", "12121")
		in := strings.Join(deeper, "\n")
		r := bookGet(t, path, in, "--solve")
		wantOK(t, r)
		s := run(t, in, append([]string{"solve", testTTSize}, testBoardFlags...)...)
		wantOK(t, s)
		if r.stdout != s.stdout {
			t.Errorf("book get --solve differs from solve:\n%s", firstDiff(r.stdout, s.stdout))
		}
	})
	t.Run("empty input", func(t *testing.T) {
		r := bookGet(t, path, "")
		wantOK(t, r)
		if r.stdout != "" {
			t.Errorf("got %q, want no output", r.stdout)
		}
	})
}

func TestBookGet_invalidLines(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	in := strings.Join([]string{"12 1", "126", "1 2 3", "", "12x", "-", "12121212", "3333 x", "33333", "1212121", strings.Repeat("3", 70000), "12"}, "\n")
	r := bookGet(t, path, in)
	wantErr(t, r, "6 of 11 lines are not positions")
	scores := scoreMap(t, solvedLines(t, testBookDepth))
	// A finished game is a position, but never in a book.
	want := fmt.Sprintf("12 %s\n- %s\n3333 %s\n1212121 ?\n12 %s\n", scores["12"], scores["-"], scores["3333"], scores["12"])
	if r.stdout != want {
		t.Errorf("the good lines were not all answered: got\n%s\nwant\n%s", r.stdout, want)
	}
	for _, want := range []string{
		`line 2: moves "126": move 3 ('6'): column out of range 1..5`,
		`line 3: want "moves" or "moves score", got "1 2 3"`,
		`line 5: moves "12x": move 3 ('x'): not a column digit`,
		`line 7: moves "12121212": move 8 ('2'): game already over`,
		`line 9: moves "33333": move 5 ('3'): column 3 is full`,
		`line 11: longer than 4096 bytes, not a position: "3333333333333333333333333333333333333333"...`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
		}
	}
	if code := exitCode(r.err); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestBookGet_args(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	t.Run("positions", func(t *testing.T) {
		r := bookGet(t, path, "", "", "-", "12", "1234512")
		wantOK(t, r)
		want := scoreMap(t, solvedLines(t, testBookDepth))
		if exp := fmt.Sprintf("- %s\n- %s\n12 %s\n1234512 ?\n", want["-"], want["-"], want["12"]); r.stdout != exp {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, exp)
		}
	})
	t.Run("bad argument", func(t *testing.T) {
		r := bookGet(t, path, "", "9", "12")
		wantErr(t, r, "1 of 2 arguments are not positions")
		if !strings.Contains(r.stderr, `argument 1: moves "9": move 1 ('9'): column out of range 1..5`) {
			t.Errorf("stderr: %s", r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "12 ") {
			t.Errorf("stdout %q: want the good argument answered", r.stdout)
		}
	})
}

func TestBookGet_analyze(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	solveA := func(t *testing.T, in string) string {
		t.Helper()
		r := run(t, in, append([]string{"solve", "-a", testTTSize}, testBoardFlags...)...)
		wantOK(t, r)
		return r.stdout
	}
	t.Run("children in the book equal solve -a", func(t *testing.T) {
		// Every child of a position above the book's depth is in the
		// book, or makes four; finished games print -1000 throughout.
		in := strings.Join(append(gamePositions(testBoard, testBookDepth-1), "1212121", "1111"), "\n")
		r := bookGet(t, path, in, "-a")
		wantOK(t, r)
		if want := solveA(t, in); r.stdout != want {
			t.Errorf("book get -a differs from solve -a:\n%s", firstDiff(r.stdout, want))
		}
	})
	leaves := positionsAt(testBoard, testBookDepth)
	in := strings.Join(leaves, "\n")
	want := solveA(t, in)
	t.Run("children missing print ?", func(t *testing.T) {
		r := bookGet(t, path, in, "-a")
		wantOK(t, r)
		got, exact := outputLines(r.stdout), outputLines(want)
		if len(got) != len(exact) {
			t.Fatalf("%d lines, want %d", len(got), len(exact))
		}
		unknown := 0
		for i := range got {
			g, w := strings.Fields(got[i]), strings.Fields(exact[i])
			if len(g) != len(w) {
				t.Fatalf("line %q, solve -a says %q", got[i], exact[i])
			}
			for c := range g {
				if g[c] == "?" {
					unknown++
				} else if g[c] != w[c] {
					t.Errorf("line %q, solve -a says %q", got[i], exact[i])
				}
			}
		}
		if unknown == 0 {
			t.Error("no column printed ? though the children of the deepest positions are not in the book")
		}
	})
	t.Run("--solve equals solve -a", func(t *testing.T) {
		r := bookGet(t, path, in, "-a", "--solve")
		wantOK(t, r)
		if r.stdout != want {
			t.Errorf("book get -a --solve differs from solve -a:\n%s", firstDiff(r.stdout, want))
		}
	})
}

func TestBookGet_errors(t *testing.T) {
	isolateEnv(t)
	path := makeBook(t, 2)
	t.Run("missing book", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nothing")
		r := bookGet(t, missing, "", "1")
		wantErr(t, r, "book "+missing+" does not exist")
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a read-only command made %s: %v", missing, err)
		}
	})
	t.Run("board given and different", func(t *testing.T) {
		r := bookGet(t, path, "", "--width=7", "--height=6", "1")
		wantErr(t, r, "holds 5x4 positions, not 7x6", "--width 5 --height 4")
	})
	t.Run("book.path from the environment", func(t *testing.T) {
		t.Setenv("C4BOOK_BOOK_PATH", path)
		r := run(t, "", "book", "get", "1")
		wantOK(t, r)
		if !strings.HasPrefix(r.stdout, "1 ") || strings.Contains(r.stdout, "?") {
			t.Errorf("got %q", r.stdout)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := runContext(t, ctx, "1\n2\n", "book", "get", "--book", path)
		if !errors.Is(r.err, errInterrupted) {
			t.Errorf("error %v, want errInterrupted", r.err)
		}
	})
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := outputLines(got), outputLines(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// BenchmarkBookGet_lines measures "c4book book get" on a million lines of
// standard input, looked up in a book of a million 7x6 positions (every
// position up to depth 9 and the first of depth 10, with random scores
// possible at their depth, as in the book package's benchmarks), compacted.
// The lines are the positions in random order. Output goes to io.Discard.
//
//	go test -run '^$' -bench BookGet -benchtime 3x ./cmd/c4book/
//
// With C4BOOK_BENCH_DIR set, the book and the input lines are left in that
// directory, to time the binary:
//
//	time c4book book get --book $C4BOOK_BENCH_DIR/book < $C4BOOK_BENCH_DIR/lines > /dev/null
func BenchmarkBookGet_lines(b *testing.B) {
	isolateEnvB(b)
	dir := os.Getenv("C4BOOK_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path, lines := benchGetBook(b, dir)
	args := []string{"book", "get", "--book", path}
	for b.Loop() {
		var stderr bytes.Buffer
		if err := Run(context.Background(), args, bytes.NewReader(lines), discard{}, &stderr); err != nil {
			b.Fatalf("%v\n%s", err, stderr.String())
		}
	}
	n := bytes.Count(lines, []byte{'\n'})
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// benchGetBookEntries is the size of the book and of the input of
// BenchmarkBookGet_lines.
const benchGetBookEntries = 1_000_000

// benchGetBook makes the book of BenchmarkBookGet_lines in dir (or reuses
// it, with its lines, if dir holds them) and returns its path and the
// input lines.
func benchGetBook(b *testing.B, dir string) (string, []byte) {
	b.Helper()
	path, linesFile := filepath.Join(dir, "book"), filepath.Join(dir, "lines")
	if lines, err := os.ReadFile(linesFile); err == nil {
		if _, err := os.Stat(path); err == nil {
			return path, lines
		}
	}
	start := time.Now()
	board := solver.Standard
	bk, err := book.Open(path, &book.Options{Create: true, Board: board})
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	var entries []book.Entry
	var moves []string
	type node struct {
		p     solver.Position
		moves string
	}
	level := []node{{board.NewPosition(), ""}}
	for len(entries) < benchGetBookEntries && len(level) > 0 {
		seen := map[uint64]bool{}
		var next []node
		for _, n := range level {
			if len(entries) == benchGetBookEntries {
				break
			}
			lo, hi := board.ScoreRange(n.p.Moves())
			score := lo + rng.IntN(hi-lo+1)
			if n.p.CanWinNext() {
				score = board.WinNowScore(n.p.Moves())
			}
			entries = append(entries, book.EntryOf(n.p, book.Value{Score: score, Origin: book.OriginSolved}))
			moves = append(moves, solver.FormatMoves(n.moves))
			for col := range board.Width() {
				if !n.p.CanPlay(col) || n.p.IsWinningMove(col) {
					continue
				}
				c := n.p
				c.Play(col)
				if k := c.CanonicalKey(); !seen[k] {
					seen[k] = true
					next = append(next, node{c, n.moves + string(rune('1'+col))})
				}
			}
		}
		level = next
	}
	for i := 0; i < len(entries); i += 100_000 {
		if err := bk.PutBatch(entries[i:min(i+100_000, len(entries))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := bk.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	rng.Shuffle(len(moves), func(i, j int) { moves[i], moves[j] = moves[j], moves[i] })
	lines := []byte(strings.Join(moves, "\n") + "\n")
	if err := os.WriteFile(linesFile, lines, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("made a book of %d positions and %d lines in %v", len(entries), len(moves), time.Since(start).Round(time.Millisecond))
	return path, lines
}

// discard is io.Discard without its ReaderFrom, like a pipe to another
// program.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// isolateEnvB empties the C4BOOK_* variables for a benchmark.
func isolateEnvB(b *testing.B) {
	b.Helper()
	for _, k := range config.Keys() {
		b.Setenv(k.Env, "")
	}
}
