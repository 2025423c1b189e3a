package book

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/c4book/c4book/internal/splitmix"
	"github.com/c4book/c4book/solver"
)

// Benchmarks of the loaded form and the binary export, on the benchmark
// book of bench_test.go (a million 7x6 positions), against Pebble's
// lookups on the same book (BenchmarkBook_Get, BenchmarkReader_GetEntry):
//
//	go test -run '^$' -bench 'Book_Get$|Reader_GetEntry|Loaded|Load|Binary' -benchtime 2000000x ./book/

// benchLoadedBook is the benchmark book loaded, made once.
var benchLoadedBook struct {
	once   sync.Once
	loaded *Loaded
	err    error
}

// loadBenchBook returns the benchmark book, loaded, and its entries.
func loadBenchBook(b *testing.B) (*Loaded, *Book, []Entry) {
	bk, entries := openBenchBook(b)
	benchLoadedBook.once.Do(func() {
		benchLoadedBook.loaded, benchLoadedBook.err = Load(bk)
	})
	if benchLoadedBook.err != nil {
		b.Fatal(benchLoadedBook.err)
	}
	return benchLoadedBook.loaded, bk, entries
}

// reportSize reports the bytes an entry of l takes in memory, and of the
// book's tables on disk and in Pebble's block cache.
func reportSize(b *testing.B, l *Loaded, bk *Book) {
	_, tables := bk.DiskUsage()
	n := float64(l.Len())
	b.ReportMetric(float64(l.Bytes())/n, "B/entry")
	b.ReportMetric(float64(tables)/n, "pebble-table-B/entry")
	b.ReportMetric(float64(bk.DBStats().CacheBytes)/n, "pebble-cache-B/entry")
}

// BenchmarkLoaded_GetEntry looks up random positions of the loaded book,
// one goroutine: the lookups of BenchmarkBook_Get.
func BenchmarkLoaded_GetEntry(b *testing.B) {
	l, bk, entries := loadBenchBook(b)
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		v, ok, err := l.GetEntry(e.Depth, e.Key)
		if err != nil || !ok || v != e.Value {
			b.Fatalf("GetEntry(%v) = %v, %v, %v", e, v, ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
	reportSize(b, l, bk)
}

// BenchmarkLoaded_GetEntry_parallel looks up random positions from
// GOMAXPROCS goroutines.
func BenchmarkLoaded_GetEntry_parallel(b *testing.B) {
	l, _, entries := loadBenchBook(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			e := entries[rng.IntN(len(entries))]
			if _, ok, _ := l.GetEntry(e.Depth, e.Key); !ok {
				b.Errorf("GetEntry(%v): not found", e)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkLoaded_GetEntry_missing looks up positions of depth 10 with
// the keys of other depths: few are held (those of depth 10 are).
func BenchmarkLoaded_GetEntry_missing(b *testing.B) {
	l, _, entries := loadBenchBook(b)
	rng := rand.New(rand.NewPCG(2, 2))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		l.GetEntry(10, e.Key)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkLoaded_binarySearch is BenchmarkLoaded_GetEntry without the
// index: a binary search of the whole depth (its mixed keys are sorted).
// It measures what the index buys.
func BenchmarkLoaded_binarySearch(b *testing.B) {
	l, _, entries := loadBenchBook(b)
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		e := entries[rng.IntN(len(entries))]
		r := l.runs[e.Depth]
		i, ok := slices.BinarySearch(l.keys[r.lo:r.hi], splitmix.Mix(e.Key))
		if !ok || unpackValue(l.values[r.lo+i]) != e.Value {
			b.Fatalf("%v: not found", e)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkLoaded_oracle is BenchmarkLoaded_GetEntry through an Oracle,
// as a solver asks: 4,096 random positions of the book, in turn.
func BenchmarkLoaded_oracle(b *testing.B) {
	l, _, entries := loadBenchBook(b)
	o := l.NewOracle()
	rng := rand.New(rand.NewPCG(1, 1))
	type asked struct {
		p     solver.Position
		score int
	}
	positions := make([]asked, 4096)
	for i := range positions {
		e := entries[rng.IntN(len(entries))]
		p, err := l.Board().PositionFromKey(e.Key)
		if err != nil {
			b.Fatal(err)
		}
		positions[i] = asked{p, e.Score}
	}
	i := 0
	for b.Loop() {
		x := &positions[i%len(positions)]
		if s, ok := o.Score(&x.p); !ok || s != x.score {
			b.Fatalf("Score = %d, %v; want %d", s, ok, x.score)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkLoad loads the benchmark book from Pebble.
func BenchmarkLoad(b *testing.B) {
	bk, entries := openBenchBook(b)
	for b.Loop() {
		l, err := Load(bk)
		if err != nil || l.Len() != len(entries) {
			b.Fatalf("Load: %d entries, %v", l.Len(), err)
		}
	}
	b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
