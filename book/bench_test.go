package book

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/c4book/c4book/solver"
)

// Benchmarks on a book of a million 7x6 positions: every position up to
// depth 9 and the first ones of depth 10 in walk order. Solving them would
// take hours, so the scores are synthetic: uniform over the range possible
// at each depth (the win-now score where the player to move makes four at
// once). Real scores are more skewed, so they compress at least as well.
//
//	go test -run '^$' -bench ImportText -benchtime 3x ./book/bookfile/    (import rate, size: bookfile's bench_test.go)
//	go test -run '^$' -bench Get -benchtime 2000000x ./book/     (lookups)

// benchEntries is the size of the benchmark book.
const benchEntries = 1_000_000

// benchFixture is the benchmark book's data, made once.
var benchFixture struct {
	once    sync.Once
	entries []Entry
	text    []byte // "moves score" lines of entries
}

// benchData returns the entries of the benchmark book and their text.
func benchData(tb testing.TB) ([]Entry, []byte) {
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
			benchFixture.entries = append(benchFixture.entries, EntryOf(p, Value{Score: score, Origin: OriginSolved}))
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
func benchOptions() *Options {
	return &Options{Create: true, Board: solver.Standard, CacheBytes: 64 << 20}
}

// benchBook is the compacted benchmark book, shared by the Get benchmarks.
var benchBook struct {
	once sync.Once
	book *Book
	err  error
}

// openBenchBook returns the compacted benchmark book with its blocks in the
// cache. It stays open until the test binary exits.
func openBenchBook(b *testing.B) (*Book, []Entry) {
	entries, _ := benchData(b)
	benchBook.once.Do(func() {
		dir, err := os.MkdirTemp("", "c4book-bench-")
		if err != nil {
			benchBook.err = err
			return
		}
		benchCleanup = append(benchCleanup, func() { os.RemoveAll(dir) })
		bk, err := Open(filepath.Join(dir, "book"), benchOptions())
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

// BenchmarkBook_Get looks up random positions of the book, one goroutine.
func BenchmarkBook_Get(b *testing.B) {
	bk, entries := openBenchBook(b)
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		v, ok, err := bk.GetEntry(e.Depth, e.Key)
		if err != nil || !ok || v != e.Value {
			b.Fatalf("GetEntry(%v) = %v, %v, %v", e, v, ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkBook_Get_parallel looks up random positions from GOMAXPROCS
// goroutines.
func BenchmarkBook_Get_parallel(b *testing.B) {
	bk, entries := openBenchBook(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			e := entries[rng.IntN(len(entries))]
			if _, ok, err := bk.GetEntry(e.Depth, e.Key); err != nil || !ok {
				b.Errorf("GetEntry(%v) = %v, %v", e, ok, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkBook_Get_missing looks up positions of depth 11, none of which
// is in the book.
func BenchmarkBook_Get_missing(b *testing.B) {
	bk, entries := openBenchBook(b)
	rng := rand.New(rand.NewPCG(2, 2))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		if _, ok, err := bk.GetEntry(11, e.Key); err != nil || ok {
			b.Fatalf("GetEntry(11, %#x) = %v, %v", e.Key, ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkReader_GetEntry looks up random positions of the book with one
// Reader.
func BenchmarkReader_GetEntry(b *testing.B) {
	bk, entries := openBenchBook(b)
	r, err := bk.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		v, ok, err := r.GetEntry(e.Depth, e.Key)
		if err != nil || !ok || v != e.Value {
			b.Fatalf("GetEntry(%v) = %v, %v, %v", e, v, ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}
