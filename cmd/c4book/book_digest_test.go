package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// plainDigest computes the digest of the positions under root with at
// most depth stones as docs/format.md says, without the book's code: a
// walk from root, one record per canonical key (a position whose last
// move made four left out), sorted by stones then key, the key in 8 bytes
// big-endian and the score, from "moves score" lines, in one signed byte.
// It returns the digest and the number of records.
func plainDigest(tb testing.TB, b *solver.Board, lines, root string, depth int) (string, int) {
	tb.Helper()
	scores := map[uint64]int{}
	for moves, score := range scoreMap(tb, lines) {
		p, err := b.Parse(moves)
		if err != nil {
			tb.Fatal(err)
		}
		scores[p.CanonicalKey()] = atoi(tb, score)
	}
	type record struct {
		depth int
		key   uint64
	}
	seen := map[uint64]bool{}
	var recs []record
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if p.Moves() > 0 && p.LastMoveWon() || seen[p.CanonicalKey()] {
			return
		}
		seen[p.CanonicalKey()] = true
		recs = append(recs, record{p.Moves(), p.CanonicalKey()})
		if p.Moves() < depth {
			for _, c := range p.Children() {
				walk(c)
			}
		}
	}
	r, err := b.Parse(root)
	if err != nil {
		tb.Fatal(err)
	}
	walk(r)
	slices.SortFunc(recs, func(a, b record) int { return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.key, b.key)) })
	h := sha256.New()
	for _, r := range recs {
		score, ok := scores[r.key]
		if !ok {
			tb.Fatalf("no line for the position of depth %d key %#x", r.depth, r.key)
		}
		h.Write(binary.BigEndian.AppendUint64(nil, r.key))
		h.Write([]byte{byte(int8(score))})
	}
	return fmt.Sprintf("%x", h.Sum(nil)), len(recs)
}

// digestOf runs "c4book book digest" with args and returns the digest it
// printed.
func digestOf(tb testing.TB, args ...string) string {
	tb.Helper()
	r := run(tb, "", append([]string{"book", "digest"}, args...)...)
	wantOK(tb, r)
	if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).MatchString(r.stdout) {
		tb.Fatalf("output %q: want one line of 64 lower-case hex digits", r.stdout)
	}
	return strings.TrimSpace(r.stdout)
}

func TestBookDigest(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	want, n := plainDigest(t, testBoard, solvedLines(t, testBookDepth), "", testBookDepth)
	r := run(t, "", "book", "digest", "--book", path)
	wantOK(t, r)
	if r.stdout != want+"\n" {
		t.Errorf("digest %q, want %s (the solve output's positions hashed in the test)", r.stdout, want)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("%s positions hashed: root -, 0 to %d stones", itoa(n), testBookDepth)) {
		t.Errorf("standard error does not count the %d positions:\n%s", n, r.stderr)
	}
	t.Run("a shallower depth and a root", func(t *testing.T) {
		t.Parallel()
		want, _ := plainDigest(t, testBoard, solvedLines(t, testBookDepth), "23", 4)
		if got := digestOf(t, "--book", path, "--root", "23", "--depth", "4"); got != want {
			t.Errorf("root 23 depth 4: digest %s, want %s", got, want)
		}
	})
	t.Run("by root", func(t *testing.T) {
		t.Parallel()
		r := run(t, "", "book", "digest", "--book", path, "--by-root", "2", "--concurrency", "2")
		wantOK(t, r)
		lines := outputLines(r.stdout)
		if len(lines) != 1+25 || lines[0] != "- "+want {
			t.Fatalf("got %d lines, first %q: want 26, the first \"- %s\"", len(lines), lines[0], want)
		}
		for i, line := range lines[1:] {
			moves, sum, _ := strings.Cut(line, " ")
			if wantMoves := string(rune('1'+i/5)) + string(rune('1'+i%5)); moves != wantMoves {
				t.Errorf("line %d: %q, want the sequence %s", i+2, line, wantMoves)
			}
			if i%5 == 2 || i == 0 { // a few: each is a run of its own
				if got := digestOf(t, "--book", path, "--root", moves); got != sum {
					t.Errorf("line %q: --root %s prints %s", line, moves, got)
				}
			}
		}
		// Mirror images share their digest: 12 and 54.
		if lines[1+1][3:] != lines[1+5*4+3][3:] {
			t.Errorf("12 and 54 have different digests:\n%s\n%s", lines[2], lines[24])
		}
	})
}

// TestBookDigest_generated: the books of the real generate, of the whole
// board and under a root: the part rebuilt under the root has the digest
// of the whole book for that root, which --by-root prints too; on 4x4 to
// the full board, the digest covers exactly the positions the job wrote.
func TestBookDigest_generated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	whole, part := filepath.Join(dir, "whole.db"), filepath.Join(dir, "part.db")
	for _, args := range [][]string{
		{"--book", whole},
		{"--book", part, "--root", "33"},
	} {
		wantOK(t, run(t, "", append([]string{"generate", "--width=5", "--height=4", "--depth=8", "--workers=1", "--task-size=64", testTTSize}, args...)...))
	}
	got := digestOf(t, "--book", part, "--root", "33")
	if want := digestOf(t, "--book", whole, "--root", "33"); got != want {
		t.Errorf("the part's digest %s, the whole book's for root 33 %s", got, want)
	}
	r := run(t, "", "book", "digest", "--book", whole, "--by-root", "2")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "\n33 "+got+"\n") {
		t.Errorf("--by-root 2 has no line \"33 %s\":\n%s", got, r.stdout)
	}
	if got == digestOf(t, "--book", whole, "--root", "32") {
		t.Errorf("roots 33 and 32 have the same digest")
	}

	small := filepath.Join(dir, "4x4.db")
	g := run(t, "", "generate", "--width=4", "--height=4", "--depth=16", "--book", small, "--workers=1", testTTSize)
	wantOK(t, g)
	d := run(t, "", "book", "digest", "--book", small)
	wantOK(t, d)
	if positions := summaryValue(g.stdout, "positions"); !strings.HasPrefix(d.stderr, positions+" positions hashed") {
		t.Errorf("the job wrote %s positions; the digest: %s", positions, d.stderr)
	}
}

// TestBookDigest_incomplete: a book lacking a position of the set fails
// with exit status 1, naming it and the job that completes the book; a
// score changed changes the digest.
func TestBookDigest_incomplete(t *testing.T) {
	t.Parallel()
	lines := solvedLines(t, testBookDepth)
	want, _ := plainDigest(t, testBoard, lines, "", testBookDepth)
	// The lines hold 3422 and its mirror image: both go.
	hole, err := testBoard.Parse("3422")
	if err != nil {
		t.Fatal(err)
	}
	var holed, removed []string
	for _, line := range outputLines(lines) {
		moves, _, _ := strings.Cut(line, " ")
		if p, err := testBoard.Parse(moves); err != nil || p.CanonicalKey() != hole.CanonicalKey() {
			holed = append(holed, line)
		} else {
			removed = append(removed, line)
		}
	}
	if len(holed) != len(outputLines(lines))-2 {
		t.Fatalf("%d lines of %d left", len(holed), len(outputLines(lines)))
	}
	path := filepath.Join(t.TempDir(), "book")
	wantOK(t, run(t, strings.Join(holed, "\n"), append([]string{"book", "import", "--create", "--book", path}, testBoardFlags...)...))
	// 2234 is the game the digest names: the first from the root in the
	// order of the columns that reaches 3422 or its mirror image.
	for _, args := range [][]string{{"--book", path}, {"--book", path, "--by-root", "1"}} {
		r := run(t, "", append([]string{"book", "digest"}, args...)...)
		if code := exitCode(r.err); code != 1 {
			t.Fatalf("%v: exit code %d (%v), want 1", args, code, r.err)
		}
		wantErr(t, r, "book "+path+" is incomplete for root - and depth 5", "position 2234 (4 stones", "is not in the book",
			"run the job that builds it (c4book generate --width 5 --height 4 --depth 5 --book "+path+")")
		if r.stdout != "" {
			t.Errorf("%v: printed %q", args, r.stdout)
		}
	}
	// Under a root that does not reach it, the book is complete.
	if got := digestOf(t, "--book", path, "--root", "1"); got == "" {
		t.Error("no digest")
	}
	r := run(t, "", "book", "digest", "--book", path, "--root", "32", "--depth", "4")
	wantErr(t, r, "incomplete for root 32 and depth 4", "position 3244", "(c4book generate --width 5 --height 4 --root 32 --depth 4 --book "+path+")")

	// Filled, it has the digest; with a score changed, another.
	wantOK(t, run(t, lines, "book", "import", "--book", path))
	if got := digestOf(t, "--book", path); got != want {
		t.Fatalf("digest %s, want %s", got, want)
	}
	moves, score, _ := strings.Cut(removed[0], " ")
	wantOK(t, run(t, moves+" "+itoa(atoi(t, score)+1), "book", "import", "--overwrite", "--book", path))
	if got := digestOf(t, "--book", path); got == want {
		t.Errorf("digest %s unchanged by a changed score", got)
	}
}

func TestBookDigest_errors(t *testing.T) {
	t.Parallel()
	path := makeBook(t, 4)
	empty := filepath.Join(t.TempDir(), "empty")
	wantOK(t, run(t, "", append([]string{"book", "import", "--create", "--book", empty}, testBoardFlags...)...))
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"not a position", []string{"--root", "16"}, 1, []string{"--root 16", "column"}},
		{"a full column", []string{"--root", "11111"}, 1, []string{"--root 11111"}},
		{"a finished game", []string{"--root", "1212121"}, 1, []string{"--root 1212121", "finished game"}},
		{"deeper than the book", []string{"--depth", "5"}, 1, []string{"--depth 5", "at most 4 stones"}},
		{"shallower than the root", []string{"--root", "123", "--depth", "2"}, 1, []string{"--depth 2", "the root's 3"}},
		{"the book's depth above the root", []string{"--root", "12345"}, 1, []string{"at most 4 stones, fewer than the root's 5"}},
		{"sequences too long", []string{"--root", "12", "--by-root", "3"}, 1, []string{"--by-root 3", "at most 2"}},
		{"negative depth", []string{"--depth", "-1"}, 2, []string{"--depth -1"}},
		{"negative by-root", []string{"--by-root", "-1"}, 2, []string{"--by-root -1"}},
		{"negative concurrency", []string{"--concurrency", "-1"}, 2, []string{"--concurrency -1"}},
		{"an argument", []string{"33"}, 2, []string{"unknown command"}},
		{"another board", []string{"--width", "7", "--height", "6"}, 1, []string{"5x4", "7x6"}},
		{"an empty book", []string{"--book", empty}, 1, []string{"holds no position"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", append([]string{"book", "digest", "--book", path}, c.args...)...)
			if code := exitCode(r.err); code != c.code {
				t.Fatalf("exit code %d (%v), want %d", code, r.err, c.code)
			}
			wantErr(t, r, c.want...)
		})
	}
}
