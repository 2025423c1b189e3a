package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
)

func TestBookStats(t *testing.T) {
	t.Parallel()
	path := makeBook(t, 4)
	perDepth := map[int]int{}
	for _, m := range gamePositions(testBoard, 4) {
		p, err := testBoard.Parse(m)
		if err != nil {
			t.Fatal(err)
		}
		perDepth[p.Moves()]++
	}
	t.Run("depths", func(t *testing.T) {
		r := run(t, "", "book", "stats", "--book", path)
		wantOK(t, r)
		t.Logf("\n%s", r.stdout)
		// Each position and its mirror image share an entry: a depth has
		// at most as many entries as positions, and more than half.
		total := 0
		for depth := 0; depth <= 4; depth++ {
			m := regexp.MustCompile(fmt.Sprintf(`(?m)^\s+%d\s+(\d+)\s+0\s+0\s+0\s+(\d+)\s*$`, depth)).FindStringSubmatch(r.stdout)
			if m == nil || m[1] != m[2] {
				t.Errorf("no line \"%d N 0 0 0 N\" for depth %d", depth, depth)
				continue
			}
			var n int
			fmt.Sscan(m[1], &n)
			if n > perDepth[depth] || 2*n < perDepth[depth] {
				t.Errorf("depth %d: %d entries for %d positions", depth, n, perDepth[depth])
			}
			total += n
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^\s+all\s+%d\s+0\s+0\s+0\s+%d\s*$`, total, total)).MatchString(r.stdout) {
			t.Errorf("no totals line \"all %d 0 0 0 %d\"", total, total)
		}
		for _, want := range []string{"book " + path, "board 5x4", "0 jobs", "disk "} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stats do not mention %q", want)
			}
		}
	})
	t.Run("jobs", func(t *testing.T) {
		withBook(t, path, func(bk *book.Book) {
			for _, j := range []book.Job{
				{ID: "d4", Depth: 4, State: book.JobDone, Planned: 120, Solved: 100, Derived: 20},
				{ID: "deeper", Root: "33", Depth: 8, State: book.JobFailed, Planned: 9, Message: "a worker gave up"},
			} {
				if _, err := bk.PutJob(j); err != nil {
					t.Fatal(err)
				}
			}
		})
		r := run(t, "", "book", "stats", "--book", path)
		wantOK(t, r)
		t.Logf("\n%s", r.stdout)
		for _, re := range []string{
			`(?m)^job\s+state\s+root\s+depth\s+planned\s+solved\s+derived`,
			`(?m)^d4\s+done\s+-\s+4\s+120\s+100\s+20\s`,
			`(?m)^deeper\s+failed\s+33\s+8\s+9\s+0\s+0\s`,
			`(?m)^job deeper: a worker gave up$`,
			`2 jobs`,
		} {
			if !regexp.MustCompile(re).MatchString(r.stdout) {
				t.Errorf("stats do not match %s", re)
			}
		}
	})
	t.Run("arguments are a usage error", func(t *testing.T) {
		r := run(t, "", "book", "stats", "--book", path, "extra")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d (%v), want 2", code, r.err)
		}
	})
}
