package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
)

// TestBookRevoke: a book of depth 5 whose leaves were solved, one in two
// by a registered worker "liar" that stored wrong scores, and whose job
// is done. book revoke --worker liar removes the liar's entries and the
// derived ones above, and marks the job; generate run again solves them
// and derives again, and every score of the book is then right.
func TestBookRevoke(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := makeBook(t, testBookDepth)
	wantOK(t, run(t, "", "worker", "add", "liar", "--book", path, "--out", filepath.Join(dir, "liar.nkey")))
	wantOK(t, run(t, "", "worker", "add", "honest", "--book", path, "--out", filepath.Join(dir, "honest.nkey")))
	const job = "5x4-d5"
	var lies int
	withBook(t, path, func(bk *book.Book) {
		var entries []book.Entry
		for e, err := range bk.Entries(0, testBookDepth) {
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case e.Depth < testBookDepth:
				e.Origin = book.OriginDerived
			case len(entries)%2 == 0:
				e.Origin, e.Worker = book.OriginSolved, 1
				if e.Score != 0 {
					e.Score = 0
				} else {
					e.Score = -1
				}
				lies++
			default:
				e.Origin, e.Worker = book.OriginSolved, 2
			}
			entries = append(entries, e)
		}
		if err := bk.PutBatch(entries); err != nil {
			t.Fatal(err)
		}
		if _, err := bk.PutJob(book.Job{ID: job, Depth: testBookDepth, State: book.JobDone}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		wantErr(t, run(t, "", "book", "revoke", "--book", path), "--worker NAME or --unkeyed is required")
		wantErr(t, run(t, "", "book", "revoke", "--worker", "liar", "--unkeyed", "--book", path), "one at a time")
		wantErr(t, run(t, "", "book", "revoke", "--worker", "nobody", "--book", path), `worker "nobody": no such worker`, "registers no worker of that name")
		wantErr(t, run(t, "", "book", "revoke", "--worker", "a.b", "--book", path), "not a letter")
		withBook(t, path, func(*book.Book) {
			wantErr(t, run(t, "", "book", "revoke", "--worker", "liar", "--book", path), "the book "+path+" is already open for writing", "a job (generate or coordinator) running on it would go on storing results")
		})
	})

	r := run(t, "", "book", "revoke", "--worker", "liar", "--book", path)
	wantOK(t, r)
	for _, want := range []string{
		"Worker liar (number 1) revoked in " + path + ":\n",
		"  removed " + itoa(lies) + " entries it solved (depth 5)\n",
		" derived entries that may depend on them (depths 0..4)\n",
		"  jobs to run again: " + job + "\n",
		"Worker liar is still registered: c4book worker remove liar refuses its key.\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("book revoke: no %q in:\n%s", want, r.stdout)
		}
	}
	r = run(t, "", "book", "revoke", "--worker", "liar", "--book", path)
	wantOK(t, r)
	if want := "The book " + path + " holds no entry solved by worker liar (number 1): nothing removed.\n"; r.stdout != want {
		t.Errorf("book revoke again: %q, want %q", r.stdout, want)
	}

	r = run(t, "", "generate", "--width=5", "--height=4", "--depth=5", "--book", path, "--workers=1", testTTSize)
	wantOK(t, r)
	if got := summaryValue(r.stdout, "solved by workers"); got != itoa(lies) {
		t.Errorf("generate after the revocation solved %s positions, want the %d revoked:\n%s", got, lies, r.stdout)
	}
	checkGeneratedBook(t, path, testBoard, "", testBookDepth, 1)
}
