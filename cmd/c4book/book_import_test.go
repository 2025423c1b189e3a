package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

func TestBookImport_badLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "book")
	scores := scoreMap(t, solvedLines(t, 3))
	in := strings.Join([]string{
		"# solve output",                  // 1: comment
		"- " + scores["-"],                // 2: good
		"12 " + scores["12"],              // 3: good
		"12",                              // 4: no score
		"126 0",                           // 5: no column 6
		"",                                // 6: blank
		"12 11",                           // 7: impossible score
		"1212121 -7",                      // 8: finished game
		"333 " + scores["333"],            // 9: good
		"1 2 3",                           // 10: three fields
		strings.Repeat("1", 1<<17) + " 0", // 11: 128 KiB
		"44 " + scores["44"],              // 12: good
	}, "\n")
	r := run(t, in, append([]string{"book", "import", "--create", "--book", path}, testBoardFlags...)...)
	wantErr(t, r, "6 of 12 lines are bad")
	if code := exitCode(r.err); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	for _, want := range []string{"line 4: ", "line 5: ", "line 7: ", "line 8: ", "line 10: ", "line 11: longer than 4096 bytes"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not report %q:\n%s", want, r.stderr)
		}
	}
	if len(r.stderr) > 2000 {
		t.Errorf("stderr is %d bytes: a long line is quoted whole", len(r.stderr))
	}
	if want := "standard input: 12 lines: 4 entries written, 0 held already, 0 conflicting, 2 skipped (blank or comment), 6 bad\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	g := bookGet(t, path, "-\n12\n333\n1\n44\n")
	wantOK(t, g)
	if want := "- " + scores["-"] + "\n12 " + scores["12"] + "\n333 " + scores["333"] + "\n1 ?\n44 " + scores["44"] + "\n"; g.stdout != want {
		t.Errorf("the book holds\n%s\nwant\n%s", g.stdout, want)
	}
}

func TestBookImport_file(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "solved.txt")
	solved := solvedLines(t, 3)
	if err := os.WriteFile(file, []byte(solved), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "book")
	t.Run("missing book", func(t *testing.T) {
		r := run(t, "", "book", "import", "--book", path, file)
		wantErr(t, r, "book "+path+" does not exist (--create makes it)")
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("import without --create made the book: %v", err)
		}
	})
	t.Run("--create", func(t *testing.T) {
		r := run(t, "", append([]string{"book", "import", "--create", "--book", path, file}, testBoardFlags...)...)
		wantOK(t, r)
		n := len(outputLines(solved))
		// A position and its mirror image share an entry: the second
		// line of the two is held already.
		entries := map[uint64]bool{}
		for _, l := range outputLines(solved) {
			p, err := testBoard.Parse(strings.Fields(l)[0])
			if err != nil {
				t.Fatal(err)
			}
			entries[p.CanonicalKey()] = true
		}
		if want := fmt.Sprintf("%s: %s lines: %s entries written, %s held already", file, human.Count(n), human.Count(len(entries)), human.Count(n-len(entries))); !strings.HasPrefix(r.stdout, want) {
			t.Errorf("stdout %q, want it to start with %q", r.stdout, want)
		}
		g := bookGet(t, path, solved)
		wantOK(t, g)
		if g.stdout != solved {
			t.Errorf("book get differs from the imported lines:\n%s", firstDiff(g.stdout, solved))
		}
	})
	t.Run("again, into the existing book, from stdin as -", func(t *testing.T) {
		r := run(t, solved, "book", "import", "--book", path, "-")
		wantOK(t, r)
		n := itoa(len(outputLines(solved)))
		if want := "standard input: " + n + " lines: 0 entries written, " + n + " held already, 0 conflicting"; !strings.HasPrefix(r.stdout, want) {
			t.Errorf("stdout %q, want it to start with %q", r.stdout, want)
		}
	})
	t.Run("a conflicting score", func(t *testing.T) {
		scores := scoreMap(t, solved)
		other := "0"
		if scores["12"] == "0" {
			other = "1"
		}
		r := run(t, "12 "+other+"\n", "book", "import", "--book", path)
		wantErr(t, r, "1 of 1 lines are bad or conflicting")
		if !strings.Contains(r.stderr, "line 1: score "+other+", but "+scores["12"]+" is held") {
			t.Errorf("stderr %q", r.stderr)
		}
		if g := bookGet(t, path, "12\n"); g.stdout != "12 "+scores["12"]+"\n" {
			t.Errorf("after a refused conflict the book holds %q", g.stdout)
		}
		r = run(t, "12 "+other+"\n", "book", "import", "--overwrite", "--book", path)
		wantOK(t, r)
		if g := bookGet(t, path, "12\n"); g.stdout != "12 "+other+"\n" {
			t.Errorf("after --overwrite the book holds %q", g.stdout)
		}
	})
	t.Run("another board given", func(t *testing.T) {
		r := run(t, solved, "book", "import", "--book", path, "--width=7", "--height=6")
		wantErr(t, r, "holds 5x4 positions, not 7x6")
	})
	t.Run("missing file", func(t *testing.T) {
		wantErr(t, run(t, "", "book", "import", "--book", path, file+".missing"), file+".missing")
	})
	t.Run("two files", func(t *testing.T) {
		r := run(t, "", "book", "import", "--book", path, file, file)
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d (%v), want 2", code, r.err)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := runContext(t, ctx, solved, "book", "import", "--book", path)
		if code := exitCode(r.err); code != 130 {
			t.Errorf("exit code %d (%v), want 130", code, r.err)
		}
	})
}
