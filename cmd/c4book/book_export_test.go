package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/c4book/c4book/book/bookfile"
)

func TestBookExport_text(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	r := run(t, "", "book", "export", "--book", path)
	wantOK(t, r)
	text := r.stdout
	lines := outputLines(text)
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "- ") {
		t.Fatalf("export does not start with the empty board:\n%.200s", text)
	}
	if !strings.Contains(r.stderr, "wrote "+itoa(len(lines))+" positions") {
		t.Errorf("stderr %q does not report %d positions", r.stderr, len(lines))
	}

	t.Run("import into a fresh book", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "fresh")
		file := filepath.Join(t.TempDir(), "book.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		wantOK(t, run(t, "", append([]string{"book", "import", "--create", "--book", fresh, file}, testBoardFlags...)...))
		again := run(t, "", "book", "export", "--book", fresh)
		wantOK(t, again)
		if again.stdout != text {
			t.Errorf("export of the imported book differs:\n%s", firstDiff(again.stdout, text))
		}
		// The same entries: every position answers the same in both.
		solved := solvedLines(t, testBookDepth)
		a, b := bookGet(t, path, solved), bookGet(t, fresh, solved)
		wantOK(t, a)
		wantOK(t, b)
		if a.stdout != b.stdout || a.stdout != solved {
			t.Errorf("the books answer differently:\n%s", firstDiff(b.stdout, a.stdout))
		}
	})
	t.Run("--max-depth and --out", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "shallow.txt")
		wantOK(t, run(t, "", "book", "export", "--book", path, "--max-depth", "2", "--out", out))
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range lines {
			if moves, _, _ := strings.Cut(l, " "); moves == "-" || len(moves) <= 2 {
				want = append(want, l)
			}
		}
		if got := outputLines(string(data)); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("--max-depth 2 wrote\n%s\nwant\n%s", data, strings.Join(want, "\n"))
		}
	})
}

func TestBookExport_pons(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	out := filepath.Join(t.TempDir(), "5x4.book")
	r := run(t, "", "book", "export", "--book", path, "--format", "pons", "--out", out)
	wantOK(t, r)
	t.Logf("\n%s", r.stderr)
	for _, re := range []string{
		`wrote .*5x4.book: \d+ of \d+ positions of at most 5 stones`,
		`lost: \d+ to collisions .*, \d+ with a score the format cannot hold`,
		`table: log2 size 21, 2,097,169 slots, 0\.0% filled \(load 0\.00 entries a slot\), 1-byte keys, 1-byte values, 4,194,344 bytes`, // 6 + 2 a slot
	} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("report does not match %s", re)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pb, err := bookfile.ReadPons(f)
	if err != nil {
		t.Fatal(err)
	}
	if pb.Depth != testBookDepth || pb.Board.String() != "5x4" {
		t.Errorf("file of depth %d, board %v", pb.Depth, pb.Board)
	}
	found, stored := 0, 0
	for _, line := range outputLines(solvedLines(t, testBookDepth)) {
		moves, score, _ := strings.Cut(line, " ")
		p, err := testBoard.Parse(moves)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := pb.Get(p)
		if !ok {
			continue
		}
		found++
		if itoa(got) != score {
			t.Errorf("%s: the pons file says %d, the book %s", moves, got, score)
		}
	}
	if m := regexp.MustCompile(`wrote .*: (\d+) of`).FindStringSubmatch(r.stderr); m != nil {
		stored = atoi(t, m[1])
	}
	if found == 0 || pb.Len() != stored {
		t.Errorf("%d positions found in the file, which holds %d; the report says %d stored", found, pb.Len(), stored)
	}
}

func TestBookExport_usage(t *testing.T) {
	t.Parallel()
	path := makeBook(t, 1)
	for _, args := range [][]string{
		{"--format", "csv"},
		{"--max-depth", "-1"},
		{"--log-size", "22"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, "", append([]string{"book", "export", "--book", path}, args...)...)
			if code := exitCode(r.err); code != 2 {
				t.Errorf("exit code %d (%v), want 2", code, r.err)
			}
		})
	}
	t.Run("bad --log-size", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "x.book")
		r := run(t, "", "book", "export", "--book", path, "--format", "pons", "--log-size", "30", "--out", out)
		wantErr(t, r, "log2 size 30 outside [21, 27]")
		if _, err := os.Stat(out); err == nil {
			t.Error("a failed export left its file")
		}
	})
}

// TestWritePonsReport: the load printed is entries offered a slot, the
// lost ones included, which the loss formula of docs/cli.md takes; the
// slots filled are a percentage beside it.
func TestWritePonsReport(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writePonsReport(&b, "x.book", bookfile.PonsReport{Depth: 12, LogSize: 21, Size: 2000, Entries: 1000, Stored: 800, Collided: 200, KeyBytes: 2, Bytes: 6006})
	want := "table: log2 size 21, 2,000 slots, 40.0% filled (load 0.50 entries a slot), 2-byte keys"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwant a line with %q", b.String(), want)
	}
}
