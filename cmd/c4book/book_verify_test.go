package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
)

func TestBookVerify(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	t.Run("consistent book", func(t *testing.T) {
		r := run(t, "", "book", "verify", "--book", path, "--sample", "40", "--seed", "7", testTTSize)
		wantOK(t, r)
		t.Logf("\n%s", r.stdout)
		for _, re := range []string{
			`(?m)^\d+ entries read, 0 corrupt$`,
			`(?m)^[1-9]\d* checked against their children, [1-9]\d* not \(a child is missing\)$`,
			`(?m)^40 re-solved \(seed 7, depth 0 and more\)$`,
			`(?m)^0 disagreements$`,
		} {
			if !regexp.MustCompile(re).MatchString(r.stdout) {
				t.Errorf("output does not match %s", re)
			}
		}
	})
	t.Run("planted wrong score", func(t *testing.T) {
		// "12" has all its children in the book: its score is checked
		// against them. The new score must be possible at depth 2.
		p, err := testBoard.Parse("12")
		if err != nil {
			t.Fatal(err)
		}
		right := atoi(t, scoreMap(t, solvedLines(t, testBookDepth))["12"])
		wrong := right + 2
		withBook(t, path, func(bk *book.Book) {
			if err := bk.PutBatch([]book.Entry{book.EntryOf(p, book.Value{Score: wrong, Origin: book.OriginDerived})}); err != nil {
				t.Fatal(err)
			}
		})
		r := run(t, "", "book", "verify", "--book", path)
		// The parent of 12 disagrees with its children too, now.
		wantErr(t, r, "0 corrupt entries, 2 wrong scores")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
		t.Logf("\n%s", r.stdout)
		if want := `children: "12" (key depth 2 key `; !strings.Contains(r.stdout, want) ||
			!strings.Contains(r.stdout, "stored "+itoa(wrong)+", want "+itoa(right)) {
			t.Errorf("output does not report the planted score of 12 (%d, want %d):\n%s", wrong, right, r.stdout)
		}
		if !strings.Contains(r.stdout, `children: "1" (key depth 1 key `) || !strings.Contains(r.stdout, "2 disagreements") {
			t.Errorf("output does not report the parent of 12:\n%s", r.stdout)
		}
	})
	t.Run("wrong solved leaf, --solved", func(t *testing.T) {
		// A leaf has no children in the book: only re-solving sees it.
		leaf := makeBook(t, testBookDepth)
		p, err := testBoard.Parse("12345")
		if err != nil || p.CanWinNext() {
			t.Fatalf("12345: %v, or a win at once: no leaf to plant", err)
		}
		right := atoi(t, scoreMap(t, solvedLines(t, testBookDepth))["12345"])
		wrong := right + 1
		if _, hi := testBoard.ScoreRange(5); wrong > hi {
			wrong = right - 1
		}
		withBook(t, leaf, func(bk *book.Book) {
			if err := bk.PutBatch([]book.Entry{book.EntryOf(p, book.Value{Score: wrong, Origin: book.OriginSolved})}); err != nil {
				t.Fatal(err)
			}
		})
		wantOK(t, run(t, "", "book", "verify", "--book", leaf))
		r := run(t, "", "book", "verify", "--book", leaf, "--solved", "--concurrency", "2", testTTSize)
		wantErr(t, r, "0 corrupt entries, 1 wrong scores")
		t.Logf("\n%s", r.stdout)
		// The entry is named by its canonical position, the mirror image.
		for _, want := range []string{`solver: "54321" (key depth 5 key `, "stored " + itoa(wrong) + ", want " + itoa(right),
			"1 re-solved: every solved entry of depth 0 and more (1)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output does not say %q", want)
			}
		}
	})
	t.Run("negative --sample", func(t *testing.T) {
		r := run(t, "", "book", "verify", "--book", path, "--sample", "-1")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d (%v), want 2", code, r.err)
		}
	})
}

// TestWriteVerifyReport: the counts of book verify are written with
// thousands separators, as every other command writes them.
func TestWriteVerifyReport(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	writeVerifyReport(&out, book.VerifyReport{Entries: 2880247, Corrupt: 0, ChildChecked: 1225583, ChildSkipped: 1654664, Resolved: 1200, Disagreements: 1001},
		&book.VerifyOptions{Sample: 1200, Seed: 123456, SampleMinDepth: 10})
	want := `2,880,247 entries read, 0 corrupt
1,225,583 checked against their children, 1,654,664 not (a child is missing)
1,200 re-solved (seed 123456, depth 10 and more)
1,001 disagreements
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
