package bookfile

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Benchmarks of the file formats on a book of a million 7x6 positions, the
// benchmark book of package book's bench_test.go (copied here): every
// position up to depth 9 and the first ones of depth 10 in walk order,
// with synthetic scores.
//
//	go test -run '^$' -bench ImportText -benchtime 3x ./book/bookfile/    (import rate, size)
//	go test -run '^$' -bench 'LoadBinary|ExportBinary' -benchtime 3x ./book/bookfile/

// benchEntries is the size of the benchmark book.
const benchEntries = 1_000_000

// benchFixture is the benchmark book's data, made once.
var benchFixture struct {
	once    sync.Once
	entries []book.Entry
	text    []byte // "moves score" lines of entries
}

// benchData returns the entries of the benchmark book and their text.
func benchData(tb testing.TB) ([]book.Entry, []byte) {
	tb.Helper()
	benchFixture.once.Do(func() {
		b := solver.Standard
		rng := rand.New(rand.NewPCG(7, 7))
		var text bytes.Buffer
		walkMoves(b, 10, benchEntries, func(p solver.Position, moves string) {
			lo, hi := b.ScoreRange(p.Moves())
			score := lo + rng.IntN(hi-lo+1)
			if p.CanWinNext() {
				score = hi
			}
			benchFixture.entries = append(benchFixture.entries, book.EntryOf(p, book.Value{Score: score, Origin: book.OriginSolved}))
			fmt.Fprintf(&text, "%s %d\n", moves, score)
		})
		benchFixture.text = text.Bytes()
	})
	if len(benchFixture.entries) != benchEntries {
		tb.Fatalf("benchmark book: %d entries", len(benchFixture.entries))
	}
	return benchFixture.entries, benchFixture.text
}

// walkMoves is walk with the move string of each position, stopping after
// limit positions.
func walkMoves(b *solver.Board, maxDepth, limit int, fn func(p solver.Position, moves string)) {
	type node struct {
		p     solver.Position
		moves string
	}
	level := []node{{b.NewPosition(), ""}}
	n := 0
	for depth := 0; depth <= maxDepth && len(level) > 0; depth++ {
		seen := make(map[uint64]bool)
		var next []node
		for _, x := range level {
			if n == limit {
				return
			}
			fn(x.p, x.moves)
			n++
			if depth == maxDepth {
				continue
			}
			for col := range b.Width() {
				if !x.p.CanPlay(col) || x.p.IsWinningMove(col) {
					continue
				}
				c := x.p
				c.Play(col)
				if k := c.CanonicalKey(); !seen[k] {
					seen[k] = true
					next = append(next, node{c, x.moves + string(rune('1'+col))})
				}
			}
		}
		level = next
	}
}

// benchOptions are the options of the benchmark books: the defaults, with
// the block cache larger than the book.
func benchOptions() *book.Options {
	return &book.Options{Create: true, Board: solver.Standard, CacheBytes: 64 << 20}
}

// dirBytes returns the bytes of the files of a directory.
func dirBytes(tb testing.TB, dir string) int64 {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			n += info.Size()
		}
	}
	return n
}

// BenchmarkImportText imports the million lines into a new book, then
// compacts it and reports its size on disk.
func BenchmarkImportText(b *testing.B) {
	_, text := benchData(b)
	var bk *book.Book
	var dir string
	i := 0
	for b.Loop() {
		b.StopTimer()
		if bk != nil {
			bk.Close()
		}
		dir = filepath.Join(b.TempDir(), fmt.Sprint("book", i))
		i++
		var err error
		if bk, err = book.Open(dir, benchOptions()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := ImportText(bk, bytes.NewReader(text), nil)
		if err != nil || st.Entries != benchEntries {
			b.Fatalf("ImportText = %+v, %v", st, err)
		}
	}
	b.ReportMetric(float64(benchEntries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	defer bk.Close()
	if err := bk.Compact(b.Context()); err != nil {
		b.Fatal(err)
	}
	st, err := bk.Stats()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.TableBytes)/float64(st.Entries), "table-B/entry")
	b.ReportMetric(float64(st.DiskBytes)/float64(st.Entries), "disk-B/entry")
	b.ReportMetric(float64(dirBytes(b, dir))/float64(st.Entries), "dir-B/entry")
}

// benchBook is the compacted benchmark book, shared by the Get benchmarks.
var benchBook struct {
	once sync.Once
	book *book.Book
	err  error
}

// openBenchBook returns the compacted benchmark book with its blocks in the
// cache. It stays open until the test binary exits.
func openBenchBook(b *testing.B) (*book.Book, []book.Entry) {
	entries, _ := benchData(b)
	benchBook.once.Do(func() {
		dir, err := os.MkdirTemp("", "c4book-bench-")
		if err != nil {
			benchBook.err = err
			return
		}
		benchCleanup = append(benchCleanup, func() { os.RemoveAll(dir) })
		bk, err := book.Open(filepath.Join(dir, "book"), benchOptions())
		if err != nil {
			benchBook.err = err
			return
		}
		for i := 0; i < len(entries); i += 100_000 {
			if err := bk.PutBatch(entries[i:min(i+100_000, len(entries))]); err != nil {
				benchBook.err = err
				return
			}
		}
		if err := bk.Compact(b.Context()); err != nil {
			benchBook.err = err
			return
		}
		// Warm the block cache: a scan reads every data block.
		for _, err := range bk.Entries(0, 42) {
			if err != nil {
				benchBook.err = err
				return
			}
		}
		benchBook.book = bk
	})
	if benchBook.err != nil {
		b.Fatal(benchBook.err)
	}
	return benchBook.book, entries
}

// benchCleanup removes what the benchmarks leave on disk; see TestMain.
var benchCleanup []func()

func TestMain(m *testing.M) {
	code := m.Run()
	if benchBook.book != nil {
		benchBook.book.Close()
	}
	for _, f := range benchCleanup {
		f()
	}
	os.Exit(code)
}

// BenchmarkLoadBinary loads the binary export of the benchmark book.
func BenchmarkLoadBinary(b *testing.B) {
	bk, entries := openBenchBook(b)
	var buf bytes.Buffer
	if _, err := ExportBinary(bk, &buf, 0, maxDepth); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l, err := LoadBinary(bytes.NewReader(buf.Bytes()))
		if err != nil || l.Len() != len(entries) {
			b.Fatalf("LoadBinary: %d entries, %v", l.Len(), err)
		}
	}
	b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkExportBinary writes the binary export of the benchmark
// book, and reports its bytes an entry.
func BenchmarkExportBinary(b *testing.B) {
	bk, entries := openBenchBook(b)
	var h BinaryHeader
	for b.Loop() {
		var err error
		if h, err = ExportBinary(bk, io.Discard, 0, maxDepth); err != nil || h.Records != int64(len(entries)) {
			b.Fatalf("ExportBinary: %+v, %v", h, err)
		}
	}
	b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(h.Size())/float64(h.Records), "file-B/entry")
}
