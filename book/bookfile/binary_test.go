package bookfile

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// mixedEntries returns the solved entries of b up to maxDepth stones with
// the three origins in turn, so that a test sees origins kept.
func mixedEntries(tb testing.TB, b *solver.Board, maxDepth int) []book.Entry {
	tb.Helper()
	entries := slices.Clone(solvedEntries(tb, b, maxDepth))
	for i := range entries {
		entries[i].Origin = book.Origins[i%len(book.Origins)]
	}
	return entries
}

// bookEntries returns every entry of bk, in key order.
func bookEntries(tb testing.TB, bk *book.Book) []book.Entry {
	tb.Helper()
	var all []book.Entry
	for e, err := range bk.Entries(0, maxDepth) {
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, e)
	}
	return all
}

// exportBinary returns the binary export of bk's depths minDepth..maxDepth.
func exportBinary(tb testing.TB, bk *book.Book, minDepth, maxDepth int) ([]byte, BinaryHeader) {
	tb.Helper()
	var buf bytes.Buffer
	h, err := ExportBinary(bk, &buf, minDepth, maxDepth)
	if err != nil {
		tb.Fatalf("ExportBinary: %v", err)
	}
	if int64(buf.Len()) != h.Size() {
		tb.Fatalf("ExportBinary wrote %d bytes, its header says %d", buf.Len(), h.Size())
	}
	return buf.Bytes(), h
}

// readBinary reads every record of a binary file.
func readBinary(data []byte) (BinaryHeader, []book.Entry, error) {
	r, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		return BinaryHeader{}, nil, err
	}
	var all []book.Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Header(), all, nil
		}
		if err != nil {
			return r.Header(), all, err
		}
		all = append(all, e)
	}
}

// TestExportBinary: the file is the header of the diagram, then the
// book's entries in key order, 11 bytes each; --max-depth and an empty
// range give what they say.
func TestExportBinary(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	putAll(t, bk, mixedEntries(t, board5x4, 5))
	want := bookEntries(t, bk)
	data, h := exportBinary(t, bk, 0, board5x4.Cells())
	if h.Records != int64(len(want)) || h.Depth != 5 || h.Version != 1 || !h.Board.Equal(board5x4) {
		t.Fatalf("header %+v, want %d records of depth 5, version 1, 5x4", h, len(want))
	}
	wantHeader := append([]byte("\x89C4BOOK\n\x01\x05\x04\x05"), binary.BigEndian.AppendUint64(nil, uint64(len(want)))...)
	if !bytes.Equal(data[:20], wantHeader) {
		t.Errorf("header % x, want % x", data[:20], wantHeader)
	}
	e := want[len(want)-1]
	last := append(book.AppendKey(nil, e.Depth, e.Key), byte(int8(e.Score)), byte(e.Origin))
	if got := data[len(data)-11:]; !bytes.Equal(got, last) {
		t.Errorf("last record % x, want % x (%v)", got, last, e)
	}
	gh, got, err := readBinary(data)
	if err != nil || gh.Version != h.Version || !gh.Board.Equal(h.Board) || gh.Depth != h.Depth || gh.Records != h.Records || !slices.Equal(got, want) {
		t.Fatalf("read back: %+v, %d entries, %v; want %+v, %d entries", gh, len(got), err, h, len(want))
	}

	t.Run("depths 2..3", func(t *testing.T) {
		data, h := exportBinary(t, bk, 2, 3)
		_, got, err := readBinary(data)
		var want2 []book.Entry
		for _, e := range want {
			if e.Depth >= 2 && e.Depth <= 3 {
				want2 = append(want2, e)
			}
		}
		if err != nil || h.Depth != 3 || !slices.Equal(got, want2) {
			t.Errorf("depth %d, %d entries, %v; want depth 3, %d entries", h.Depth, len(got), err, len(want2))
		}
	})
	t.Run("none", func(t *testing.T) {
		data, h := exportBinary(t, bk, 9, 12)
		_, got, err := readBinary(data)
		if err != nil || h.Records != 0 || h.Depth != 0 || len(data) != 20 || len(got) != 0 {
			t.Errorf("empty export: %+v, %d bytes, %d entries, %v", h, len(data), len(got), err)
		}
	})
}

// TestImportBinary: a real book exported and imported into a new one
// gives every entry back, score and origin; imported again, every record
// is held; a different score is a conflict unless Overwrite; a file of
// another board is refused.
func TestImportBinary(t *testing.T) {
	t.Parallel()
	src := newBook(t, board5x4)
	putAll(t, src, mixedEntries(t, board5x4, 6))
	want := bookEntries(t, src)
	data, _ := exportBinary(t, src, 0, maxDepth)

	dst := newBook(t, board5x4)
	st, err := ImportBinary(dst, bytes.NewReader(data), &ImportOptions{BatchSize: 1000})
	n := int64(len(want))
	if err != nil || st != (ImportStats{Lines: n, Entries: n}) {
		t.Fatalf("ImportBinary = %+v, %v; want %d records and entries", st, err, n)
	}
	if got := bookEntries(t, dst); !slices.Equal(got, want) {
		t.Fatalf("the imported book differs: %d entries, want %d; first difference %s", len(got), len(want), firstEntryDiff(got, want))
	}

	t.Run("again", func(t *testing.T) {
		st, err := ImportBinary(dst, bytes.NewReader(data), nil)
		if err != nil || st != (ImportStats{Lines: n, Held: n}) {
			t.Errorf("ImportBinary again = %+v, %v; want %d held", st, err, n)
		}
	})
	t.Run("origin given", func(t *testing.T) {
		fresh := newBook(t, board5x4)
		if _, err := ImportBinary(fresh, bytes.NewReader(data), &ImportOptions{Origin: book.OriginImported}); err != nil {
			t.Fatal(err)
		}
		for _, e := range bookEntries(t, fresh) {
			if e.Origin != book.OriginImported {
				t.Fatalf("%v: want origin imported", e)
			}
		}
	})
	t.Run("conflict", func(t *testing.T) {
		e := want[len(want)/2]
		other := e
		if other.Score > -1 {
			other.Score--
		} else {
			other.Score++
		}
		one := newBook(t, board5x4)
		putAll(t, one, []book.Entry{other})
		var msgs strings.Builder
		st, err := ImportBinary(one, bytes.NewReader(data), &ImportOptions{Errors: &msgs})
		if err != nil || st.Conflicts != 1 || st.Entries != n-1 || !st.AnyBad() {
			t.Errorf("ImportBinary = %+v, %v; want 1 conflict, %d entries", st, err, n-1)
		}
		if !strings.Contains(msgs.String(), "but "+itoa(other.Score)+" is held: kept") {
			t.Errorf("messages %q", msgs.String())
		}
		if v, _, _ := one.GetEntry(e.Depth, e.Key); v != other.Value {
			t.Errorf("after a conflict the book holds %v, want %v", v, other.Value)
		}
		st, err = ImportBinary(one, bytes.NewReader(data), &ImportOptions{Overwrite: true})
		if err != nil || st.Entries != 1 || st.Held != n-1 {
			t.Errorf("ImportBinary with Overwrite = %+v, %v; want 1 entry written", st, err)
		}
		if v, _, _ := one.GetEntry(e.Depth, e.Key); v != e.Value {
			t.Errorf("after Overwrite the book holds %v, want %v", v, e.Value)
		}
	})
	t.Run("another board", func(t *testing.T) {
		other := newBook(t, board4x4)
		if _, err := ImportBinary(other, bytes.NewReader(data), nil); !errors.Is(err, book.ErrBoardMismatch) {
			t.Errorf("ImportBinary of a 5x4 file into a 4x4 book: %v, want ErrBoardMismatch", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		fresh := newBook(t, board5x4)
		cut := data[:len(data)-5]
		st, err := ImportBinary(fresh, bytes.NewReader(cut), &ImportOptions{BatchSize: 100})
		if be, ok := errors.AsType[*BinaryError](err); !ok || be.Record != n-1 {
			t.Fatalf("ImportBinary of a cut file: %v, want a BinaryError of record %d", err, n-1)
		}
		if st.Lines != n-1 || st.Entries != (n-1)/100*100 {
			t.Errorf("stats %+v: want %d records read, the full batches written", st, n-1)
		}
	})
}

// firstEntryDiff describes the first index at which got and want differ.
func firstEntryDiff(got, want []book.Entry) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return "at " + itoa(i) + ": " + got[i].String() + ", want " + want[i].String()
		}
	}
	return "one is a prefix of the other"
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

// binaryFile returns a valid binary file of the 4x4 board holding every
// position of up to 3 stones, with scores made up in range.
func binaryFile(tb testing.TB) []byte {
	tb.Helper()
	var entries []book.Entry
	walk(board4x4, 3, func(p solver.Position) {
		lo, hi := board4x4.ScoreRange(p.Moves())
		entries = append(entries, book.EntryOf(p, book.Value{Score: lo + int(p.CanonicalKey()%uint64(hi-lo+1)), Origin: book.OriginSolved}))
	})
	slices.SortFunc(entries, func(a, b book.Entry) int {
		if a.Depth != b.Depth {
			return a.Depth - b.Depth
		}
		return cmp.Compare(a.Key, b.Key)
	})
	h := BinaryHeader{Version: binaryVersion, Board: board4x4, Depth: 3, Records: int64(len(entries))}
	data := appendBinaryHeader(nil, h)
	for _, e := range entries {
		data = appendBinaryRecord(data, e)
	}
	return data
}

// TestBinaryReader_errors: every way a file can break the format is
// reported as a BinaryError naming the record (or the header) and what is
// wrong, and a later version as ErrNewerFormat.
func TestBinaryReader_errors(t *testing.T) {
	t.Parallel()
	good := binaryFile(t)
	_, entries, err := readBinary(good)
	if err != nil {
		t.Fatalf("the good file: %v", err)
	}
	n := len(entries)
	rec := func(i int) int { return 20 + 11*i } // offset of record i
	edit := func(fn func(d []byte) []byte) []byte { return fn(slices.Clone(good)) }
	setRecord := func(i int, e book.Entry) []byte {
		return edit(func(d []byte) []byte { copy(d[rec(i):], appendBinaryRecord(nil, e)); return d })
	}
	last := entries[n-1]
	firstOf := func(depth int) int { // index of the first record of depth
		return slices.IndexFunc(entries, func(e book.Entry) bool { return e.Depth == depth })
	}
	p2, p3 := firstOf(2), firstOf(3)
	mirror := func(e book.Entry) uint64 { p, _ := board4x4.PositionFromKey(e.Key); return p.MirrorKey() }
	asymmetric := slices.IndexFunc(entries, func(e book.Entry) bool { return mirror(e) != e.Key })

	cases := []struct {
		name   string
		data   []byte
		record int64 // -1: the header
		msg    string
	}{
		{"empty", nil, -1, "0 bytes"},
		{"text", []byte("- 0\n1 2\n"), -1, "not a binary book file"},
		{"short magic", []byte("\x89C4B"), -1, "truncated"},
		{"magic", edit(func(d []byte) []byte { d[1] = 'c'; return d }), -1, "magic"},
		{"short header", good[:15], -1, "ends after 15 of the header's 20 bytes"},
		{"version 0", edit(func(d []byte) []byte { d[8] = 0; return d }), -1, "version 0"},
		{"board 0x4", edit(func(d []byte) []byte { d[9] = 0; return d }), -1, "width and height"},
		{"board 9x9", edit(func(d []byte) []byte { d[9], d[10] = 9, 9; return d }), -1, "board 9x9"},
		{"depth 17", edit(func(d []byte) []byte { d[11] = 17; return d }), -1, "depth 17 above the 16 cells"},
		{"depth without records", edit(func(d []byte) []byte { d = d[:20]; binary.BigEndian.PutUint64(d[12:], 0); return d }), -1, "depth 3, but no record"},
		{"2^63 records", edit(func(d []byte) []byte { binary.BigEndian.PutUint64(d[12:], 1<<63); return d }), -1, "more than a file can hold"},
		{"cut in a record", good[:rec(n-1)+4], int64(n - 1), "ends 4 bytes into record " + itoa(n-1)},
		{"cut between records", good[:rec(5)], 5, "ends 0 bytes into record 5"},
		{"one record more announced", edit(func(d []byte) []byte { binary.BigEndian.PutUint64(d[12:], uint64(n+1)); return d }), int64(n), "truncated"},
		{"data after", append(slices.Clone(good), 0), int64(n), "data after the last of the header's"},
		{"one record less announced", edit(func(d []byte) []byte { binary.BigEndian.PutUint64(d[12:], uint64(n-1)); return d }), int64(n - 1), "data after"},
		{"header depth above the last", edit(func(d []byte) []byte {
			d = d[:rec(p2)]
			binary.BigEndian.PutUint64(d[12:], uint64(p2))
			return d
		}), int64(p2), "the header's depth is 3, the last record's 1"},
		{"depth above the header's", setRecord(n-1, book.Entry{Depth: 4, Key: last.Key, Value: last.Value}), int64(n - 1), "depth 4 above the header's 3"},
		{"out of order", edit(func(d []byte) []byte {
			a, b := slices.Clone(d[rec(p2):rec(p2+1)]), slices.Clone(d[rec(p2+1):rec(p2+2)])
			copy(d[rec(p2):], b)
			copy(d[rec(p2+1):], a)
			return d
		}), int64(p2 + 1), "out of order"},
		{"repeated", setRecord(p2+1, entries[p2]), int64(p2 + 1), "out of order"},
		{"depth up", setRecord(p3-1, book.Entry{Depth: 3, Key: entries[p3-1].Key, Value: entries[p3-1].Value}), int64(p3 - 1), "the key has 2 stones"},
		{"not canonical", setRecord(asymmetric, book.Entry{Depth: entries[asymmetric].Depth, Key: mirror(entries[asymmetric]), Value: entries[asymmetric].Value}), int64(asymmetric), "not canonical"},
		{"not a key", setRecord(n-1, book.Entry{Depth: 3, Key: 1 << 40, Value: last.Value}), int64(n - 1), "more than 20 bits"},
		{"score above", setRecord(3, book.Entry{Depth: entries[3].Depth, Key: entries[3].Key, Value: book.Value{Score: 9, Origin: book.OriginSolved}}), 3, "score 9 outside [-7, 7], the range at depth 2"},
		{"score -128", edit(func(d []byte) []byte { d[rec(3)+9] = 0x80; return d }), 3, "score -128"},
		{"origin 0", edit(func(d []byte) []byte { d[rec(2)+10] = 0; return d }), 2, "invalid origin(0)"},
		{"origin 4", edit(func(d []byte) []byte { d[rec(2)+10] = 4; return d }), 2, "invalid origin(4)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, err := readBinary(c.data)
			be, ok := errors.AsType[*BinaryError](err)
			if !ok {
				t.Fatalf("error %v, want a BinaryError", err)
			}
			if !errors.Is(err, book.ErrCorrupt) || be.Record != c.record || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q (record %d), want record %d and %q", err, be.Record, c.record, c.msg)
			}
			if c.record >= 0 {
				if off := int64(rec(int(c.record))); be.Offset != off || !strings.Contains(err.Error(), "(byte "+itoa(int(off))+")") {
					t.Errorf("error %q: offset %d, want %d", err, be.Offset, off)
				}
				if int64(len(got)) != c.record {
					t.Errorf("%d records read before the error, want %d", len(got), c.record)
				}
			}
			if _, err := LoadBinary(bytes.NewReader(c.data)); !errors.Is(err, book.ErrCorrupt) {
				t.Errorf("LoadBinary: %v, want ErrCorrupt", err)
			}
		})
	}
	t.Run("version 2", func(t *testing.T) {
		_, _, err := readBinary(edit(func(d []byte) []byte { d[8] = 2; return d }))
		if !errors.Is(err, book.ErrNewerFormat) || !strings.Contains(err.Error(), "version 2, this program reads up to 1") {
			t.Errorf("error %v, want ErrNewerFormat", err)
		}
	})
	t.Run("sticky", func(t *testing.T) {
		r, err := NewBinaryReader(bytes.NewReader(good[:rec(1)]))
		if err != nil {
			t.Fatal(err)
		}
		r.Next()
		_, err1 := r.Next()
		_, err2 := r.Next()
		if err1 == nil || err1 != err2 || r.Read() != 1 {
			t.Errorf("Next after an error: %v then %v, %d read", err1, err2, r.Read())
		}
	})
}

// FuzzReadBinary: any bytes are read as a binary file without a panic; the
// error of a bad file wraps ErrCorrupt (or ErrNewerFormat); a file read
// whole encodes back to the same bytes, and loads to the same entries.
func FuzzReadBinary(f *testing.F) {
	good := binaryFile(f)
	f.Add(good)
	f.Add(good[:20])
	f.Add(good[:len(good)-3])
	f.Add(appendBinaryHeader(nil, BinaryHeader{Version: 1, Board: solver.Standard}))
	f.Add([]byte("\x89C4BOOK\n\x01\x07\x06\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("- 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, entries, err := readBinary(data)
		l, lerr := LoadBinary(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, book.ErrCorrupt) && !errors.Is(err, book.ErrNewerFormat) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrNewerFormat", err)
			}
			if lerr == nil {
				t.Fatalf("the reader fails (%v), LoadBinary does not", err)
			}
			return
		}
		enc := appendBinaryHeader(nil, h)
		for _, e := range entries {
			enc = appendBinaryRecord(enc, e)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("read %+v and %d entries, which encode as % x", h, len(entries), enc)
		}
		if lerr != nil {
			t.Fatalf("the reader reads the file, LoadBinary fails: %v", lerr)
		}
		if got := loadedEntries(l); !slices.Equal(got, entries) {
			t.Fatalf("LoadBinary holds %d entries, the reader read %d", len(got), len(entries))
		}
	})
}

// TestLoadBinary: the load of a book's binary export, from a file or a
// stream, holds the book's entries, as book.Load does.
func TestLoadBinary(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	putAll(t, bk, mixedEntries(t, board5x4, 6))
	l, err := book.Load(bk)
	if err != nil {
		t.Fatal(err)
	}
	want := bookEntries(t, bk)
	data, _ := exportBinary(t, bk, 0, maxDepth)
	t.Run("LoadBinary stream", func(t *testing.T) {
		lb, err := LoadBinary(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if got := loadedEntries(lb); !slices.Equal(got, want) || lb.Depth() != 6 {
			t.Errorf("LoadBinary: %d entries of depth %d, want %d of 6", len(got), lb.Depth(), len(want))
		}
	})
	t.Run("LoadBinary file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "5x4.bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lb, err := LoadBinary(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := loadedEntries(lb); !slices.Equal(got, want) || lb.Bytes() != l.Bytes() {
			t.Errorf("LoadBinary: %d entries (%d bytes), want %d (%d bytes, as book.Load)", len(got), lb.Bytes(), len(want), l.Bytes())
		}
	})
	t.Run("LoadBinary file of the wrong size", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cut.bin")
		if err := os.WriteFile(path, data[:len(data)-1], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = LoadBinary(f)
		if !errors.Is(err, book.ErrCorrupt) || !strings.Contains(err.Error(), "the file has "+itoa(len(data)-1)) {
			t.Errorf("LoadBinary of a cut file: %v", err)
		}
	})
}
