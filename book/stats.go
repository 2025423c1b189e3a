package book

import (
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Stats describes what a book holds.
type Stats struct {
	Board         string            // board size, "WxH"
	FormatVersion int               // book format version
	Entries       int64             // positions in the book
	ByOrigin      [numOrigins]int64 // positions per Origin (index 0 unused)
	AtOnce        int64             // of ByOrigin[OriginDerived], those scored at once (see DepthStats)
	Depths        []DepthStats      // one per depth holding positions, shallowest first
	Jobs          int               // generation jobs recorded
	DiskBytes     uint64            // bytes on disk: tables, write-ahead log, manifest
	TableBytes    uint64            // bytes of the live tables alone
}

// DepthStats counts the positions of one depth.
type DepthStats struct {
	Depth    int               // stones on the board
	Entries  int64             // positions of this depth
	ByOrigin [numOrigins]int64 // positions per Origin (index 0 unused)
	// AtOnce counts the derived positions scored without their children:
	// the player to move makes four at once. Generation scores them while
	// planning; the other derived positions come from their children.
	AtOnce int64
}

// Stats reads every entry of the book and counts them per depth and per
// origin. An entry that cannot be decoded ends it with a *CorruptError
// naming its key.
func (b *Book) Stats() (Stats, error) { return b.stats(0) }

// StatsInBackground is Stats for a count that runs beside work that must
// not wait for it, such as a server's requests: it sleeps for a moment
// every statsPauseEvery entries. Reading a big book takes seconds without
// blocking; in a process with one processor (GOMAXPROCS 1: c4book serve
// pinned to one core) a goroutine that wakes meanwhile, a request's,
// waits until the scheduler preempts the reading, 10 to 20 ms, and
// runtime.Gosched does not help, as a goroutine that yields runs again
// before the network is polled. Measured (docs/benchmarks.md): with
// Stats, every request of a server's first 8 s took 20 ms while it
// counted its depth-14 book; with the pauses, the count takes about
// three times as long on an idle server and a request waits at most for
// one stretch of reading, about half a millisecond.
func (b *Book) StatsInBackground() (Stats, error) { return b.stats(statsPauseEvery) }

// statsPauseEvery and statsPause pace StatsInBackground: a stretch of
// reading (4,096 entries: about 0.6 ms on the machine of
// docs/benchmarks.md), then a sleep, which the runtime rounds up to its
// timer's grain (1 ms on Linux when nothing else runs).
const (
	statsPauseEvery = 4096
	statsPause      = 100 * time.Microsecond
)

// stats is Stats, pausing every pauseEvery entries as StatsInBackground
// does unless pauseEvery is 0.
func (b *Book) stats(pauseEvery int64) (Stats, error) {
	if err := b.check(false); err != nil {
		return Stats{}, err
	}
	if b.pk != nil {
		return b.packedStats(), nil
	}
	st := Stats{Board: b.board.String(), FormatVersion: FormatVersion}
	byDepth := make([]DepthStats, b.board.Cells()+1)
	err := b.scan(0, b.board.Cells(), func(k, v []byte) error {
		if pauseEvery > 0 && st.Entries%pauseEvery == pauseEvery-1 {
			time.Sleep(statsPause)
		}
		depth, _, err := DecodeKey(k)
		if err != nil {
			return err
		}
		val, err := DecodeValue(k, v)
		if err != nil {
			return err
		}
		st.Entries++
		st.ByOrigin[val.Origin]++
		byDepth[depth].Entries++
		byDepth[depth].ByOrigin[val.Origin]++
		if val.Origin == OriginDerived {
			e, err := b.decodeEntry(k, v)
			if err != nil {
				return err
			}
			if p, _ := b.board.PositionFromKey(e.Key); p.CanWinNext() {
				st.AtOnce++
				byDepth[depth].AtOnce++
			}
		}
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	for d, ds := range byDepth {
		if ds.Entries > 0 {
			ds.Depth = d
			st.Depths = append(st.Depths, ds)
		}
	}
	jobs, err := b.Jobs()
	if err != nil {
		return Stats{}, err
	}
	st.Jobs = len(jobs)
	st.DiskBytes, st.TableBytes = b.DiskUsage()
	return st, nil
}

// DiskUsage returns the bytes the book takes on disk (tables, write-ahead
// log, manifest) and the bytes of its live tables alone, from Pebble's
// metrics: it reads no entry.
func (b *Book) DiskUsage() (disk, tables uint64) {
	if b.pk != nil {
		return uint64(b.pk.Size()), uint64(b.pk.Size())
	}
	m := b.db.Metrics()
	return m.DiskSpaceUsage(), m.Table.Local.LiveSize
}

// DBStats are figures of the book's Pebble database, for monitoring.
type DBStats struct {
	CacheBytes           int64  // in the block cache
	CacheHits, CacheMiss int64  // block cache lookups since the book was opened
	MemTableBytes        uint64 // allocated by memtables
	L0Tables             int64  // tables in level 0: many mean compactions lag behind writes
	ReadAmp              int    // tables a point lookup may read
	Compactions          int64  // since the book was opened
	Flushes              int64  // of memtables, since the book was opened
}

// DBStats returns the figures of the book's database now. It reads no
// entry.
func (b *Book) DBStats() DBStats {
	if b.pk != nil {
		return DBStats{} // no database
	}
	m := b.db.Metrics()
	return DBStats{
		CacheBytes: m.BlockCache.Size, CacheHits: m.BlockCache.Hits, CacheMiss: m.BlockCache.Misses,
		MemTableBytes: m.MemTable.Size, L0Tables: m.Levels[0].TablesCount, ReadAmp: m.ReadAmp(),
		Compactions: m.Compact.Count, Flushes: m.Flush.Count,
	}
}

// DepthRange returns the shallowest and the deepest depth holding an
// entry, and false if the book holds none. It reads two keys, not the
// whole book.
func (b *Book) DepthRange() (lo, hi int, ok bool, err error) {
	if err := b.check(false); err != nil {
		return 0, 0, false, err
	}
	if b.pk != nil {
		lo, hi, ok := b.packedDepthRange()
		return lo, hi, ok, nil
	}
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: []byte{0}, UpperBound: []byte{maxDepth + 1}})
	if err != nil {
		return 0, 0, false, err
	}
	if it.First() {
		lo, _, err = DecodeKey(it.Key())
		if err == nil && it.Last() {
			hi, _, err = DecodeKey(it.Key())
			ok = err == nil
		}
	}
	if err == nil {
		err = it.Error()
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, false, readError(err)
	}
	return lo, hi, ok, nil
}
