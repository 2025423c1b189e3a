package main

import (
	"regexp"
	"testing"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

func TestBookCompact(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	solved := solvedLines(t, testBookDepth)
	r := run(t, "", "book", "compact", "--book", path)
	wantOK(t, r)
	t.Logf("\n%s", r.stdout)
	n := len(scoreMap(t, run(t, "", "book", "export", "--book", path).stdout))
	for _, re := range []string{
		`(?m)^tables: [\d,]+ bytes before, [1-9][\d,]* after \(` + human.Count(n) + ` entries, \d+\.\d\d bytes/entry\)$`,
		`(?m)^directory: [1-9][\d,]* bytes before, [1-9][\d,]* after$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("output does not match %s", re)
		}
	}
	g := bookGet(t, path, solved)
	wantOK(t, g)
	if g.stdout != solved {
		t.Errorf("the compacted book answers differently:\n%s", firstDiff(g.stdout, solved))
	}
	t.Run("missing book", func(t *testing.T) {
		wantErr(t, run(t, "", "book", "compact", "--book", path+".missing"), "does not exist")
	})
}
