package bookfile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
)

func TestExportText(t *testing.T) {
	t.Parallel()
	src := newBook(t, board5x4)
	entries := solvedEntries(t, board5x4, 6)
	putAll(t, src, entries)
	var text bytes.Buffer
	n, err := ExportText(src, &text, 0, 20)
	if err != nil || n != int64(len(entries)) {
		t.Fatalf("ExportText = %d, %v; want %d lines", n, err, len(entries))
	}
	first, _, _ := strings.Cut(text.String(), "\n")
	if want := fmt.Sprintf("- %d", entries[0].Score); first != want {
		t.Errorf("first line %q, want %q (the empty board)", first, want)
	}

	t.Run("import round trip", func(t *testing.T) {
		dst := newBook(t, board5x4)
		st, err := ImportText(dst, bytes.NewReader(text.Bytes()), &ImportOptions{BatchSize: 77})
		if err != nil || st.AnyBad() || st.Entries != int64(len(entries)) || st.Lines != int64(len(entries)) {
			t.Fatalf("ImportText = %+v, %v", st, err)
		}
		for _, e := range entries {
			v, ok, err := dst.GetEntry(e.Depth, e.Key)
			if err != nil || !ok || v.Score != e.Score || v.Origin != book.OriginImported {
				t.Fatalf("%v: imported as %v, %v, %v", e, v, ok, err)
			}
		}
		var again bytes.Buffer
		if _, err := ExportText(dst, &again, 0, 20); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), text.Bytes()) {
			t.Error("export of the imported book differs from the original export")
		}
	})

	t.Run("depth range", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := ExportText(src, &buf, 3, 3)
		want := 0
		for _, e := range entries {
			if e.Depth == 3 {
				want++
			}
		}
		if err != nil || n != int64(want) {
			t.Errorf("ExportText(3, 3) = %d, %v; want %d", n, err, want)
		}
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if moves, _, _ := strings.Cut(line, " "); len(moves) != 3 {
				t.Errorf("line %q at depth 3", line)
			}
		}
	})
}

func TestImportText(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board4x4)
	input := strings.Join([]string{
		"# a comment",
		"12 0",       // 2: good (4x4 is a draw)
		"",           // 3: blank
		"12",         // 4: no score
		"12 x",       // 5: score not an integer
		"15 0",       // 6: column 5 on 4 columns
		"1111 0",     // 7: good? column 1 four stones
		"11111 0",    // 8: column full
		"1212121 -4", // 9: game over
		"12 9",       // 10: score out of range
		"121213 -3",  // 11: player to move wins at once: must be 5
		"121213 5",   // 12: good
		"12 0 extra", // 13: three fields
		" 0",         // 14: good: the empty board, as older exports wrote it
		"\t3 0",      // 15: good? leading tab, two fields
		"- 0",        // 16: good: the empty board
		"-1 0",       // 17: not a move string
	}, "\n")
	var msgs bytes.Buffer
	st, err := ImportText(bk, strings.NewReader(input), &ImportOptions{Errors: &msgs, Origin: book.OriginSolved})
	if err != nil {
		t.Fatal(err)
	}
	// Lines 14 and 16 are both the empty board: one entry, then held.
	want := ImportStats{Lines: 17, Entries: 5, Held: 1, Skipped: 2, Bad: 9}
	if st != want || !st.AnyBad() {
		t.Errorf("ImportText = %+v, want %+v", st, want)
	}
	for _, line := range []int{4, 5, 6, 8, 9, 10, 11, 13, 17} {
		if !strings.Contains(msgs.String(), fmt.Sprintf("line %d: ", line)) {
			t.Errorf("no message for line %d", line)
		}
	}
	t.Logf("messages:\n%s", msgs.String())
	if v, ok, _ := bk.GetMoves("121213"); !ok || v != (book.Value{Score: 5, Origin: book.OriginSolved}) {
		t.Errorf("GetMoves(121213) = %v, %v", v, ok)
	}
	if v, ok, _ := bk.GetMoves(""); !ok || v.Score != 0 {
		t.Errorf("GetMoves(\"\") = %v, %v", v, ok)
	}

	// A score other than the one held, from the book or from an earlier
	// line of the same import, is a conflict unless Overwrite.
	msgs.Reset()
	st, err = ImportText(bk, strings.NewReader("12 2\n33 1\n33 -1\n33 1\n"), &ImportOptions{Errors: &msgs, BatchSize: 2})
	if want := (ImportStats{Lines: 4, Entries: 1, Held: 1, Conflicts: 2}); err != nil || st != want || !st.AnyBad() {
		t.Errorf("ImportText of conflicts = %+v, %v, want %+v", st, err, want)
	}
	for _, line := range []string{"line 1: score 2, but 0 is held", "line 3: score -1, but 1 is held"} {
		if !strings.Contains(msgs.String(), line) {
			t.Errorf("messages %q: no %q", msgs.String(), line)
		}
	}
	if v, _, _ := bk.GetMoves("12"); v.Score != 0 {
		t.Errorf("score of 12 after a conflict: %d, want 0 kept", v.Score)
	}
	st, err = ImportText(bk, strings.NewReader("12 2\n"), &ImportOptions{Overwrite: true})
	if want := (ImportStats{Lines: 1, Entries: 1}); err != nil || st != want {
		t.Errorf("ImportText with Overwrite = %+v, %v, want %+v", st, err, want)
	}
	if v, _, _ := bk.GetMoves("12"); v.Score != 2 {
		t.Errorf("score of 12 after an overwrite: %d, want 2", v.Score)
	}
}
