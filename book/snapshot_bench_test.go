package book

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Snapshots of the benchmark book (bench_test.go), written as a job
// writes: synced batches of 10,000 entries, never compacted by hand.
//
//	go test -run '^$' -bench Snapshot -benchtime 20x ./book/
//
// With C4BOOK_SNAPSHOT_BOOK=PATH, BenchmarkBook_Snapshot also snapshots
// the book at PATH (opened for writing: no job may be running on it).

// snapshotBatch is the number of entries of a batch of these benchmarks,
// as the coordinator writes them.
const snapshotBatch = 10_000

// writeBenchBook writes entries into a new book at dir in batches.
func writeBenchBook(tb testing.TB, dir string, entries []Entry) *Book {
	tb.Helper()
	bk, err := Open(dir, benchOptions())
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < len(entries); i += snapshotBatch {
		if err := bk.PutBatch(entries[i:min(i+snapshotBatch, len(entries))]); err != nil {
			tb.Fatal(err)
		}
	}
	return bk
}

// copiedBytes returns the bytes of the files of a snapshot that are not
// hard links to the book's tables: what a snapshot copies.
func copiedBytes(tb testing.TB, dir string) int64 {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !strings.HasSuffix(e.Name(), ".sst") {
			n += info.Size()
		}
	}
	return n
}

// BenchmarkBook_Snapshot times one snapshot of a book of a million
// entries just written (its write-ahead log holds what the memtable
// does), and of the book at $C4BOOK_SNAPSHOT_BOOK if set.
func BenchmarkBook_Snapshot(b *testing.B) {
	bench := func(b *testing.B, bk *Book) {
		var last time.Time
		for b.Loop() {
			t, err := bk.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			last = t
		}
		snap := filepath.Join(snapshotsDir(bk.Path()), last.Format(snapshotTimeLayout))
		b.ReportMetric(float64(copiedBytes(b, snap))/(1<<20), "copied-MiB")
	}
	b.Run("1M-entries", func(b *testing.B) {
		entries, _ := benchData(b)
		bk := writeBenchBook(b, filepath.Join(b.TempDir(), "book"), entries)
		defer bk.Close()
		bench(b, bk)
	})
	if path := os.Getenv("C4BOOK_SNAPSHOT_BOOK"); path != "" {
		b.Run("C4BOOK_SNAPSHOT_BOOK", func(b *testing.B) {
			bk, err := Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bk.Close()
			st, err := bk.Stats()
			if err != nil {
				b.Fatal(err)
			}
			bench(b, bk)
			b.ReportMetric(float64(st.Entries), "entries")
		})
	}
}

// BenchmarkBook_PutBatchSnapshots writes the million entries into a new
// book in synced batches, with snapshots taken meanwhile every second,
// every 100 ms, or never: the cost of snapshots to a writer.
func BenchmarkBook_PutBatchSnapshots(b *testing.B) {
	entries, _ := benchData(b)
	for _, every := range []time.Duration{0, time.Second, 100 * time.Millisecond} {
		name := "none"
		if every > 0 {
			name = fmt.Sprint("every-", every)
		}
		b.Run(name, func(b *testing.B) {
			snapshots := 0
			for b.Loop() {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "book")
				bk, err := Open(dir, benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				if every > 0 {
					wg.Go(func() {
						bk.SnapshotEvery(ctx, every, func(_ time.Time, _ time.Duration, err error) {
							if err != nil {
								b.Error(err)
							}
							snapshots++
						})
					})
				}
				b.StartTimer()
				for i := 0; i < len(entries); i += snapshotBatch {
					if err := bk.PutBatch(entries[i:min(i+snapshotBatch, len(entries))]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				cancel()
				wg.Wait()
				if err := bk.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(snapshots)/float64(b.N), "snapshots/op")
		})
	}
}
