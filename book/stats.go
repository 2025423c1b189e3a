package book

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cockroachdb/pebble/v2"
)

// Stats describes what a book holds.
type Stats struct {
	Board         string            // board size, "WxH"
	FormatVersion int               // book format version
	Entries       int64             // positions in the book
	ByOrigin      [numOrigins]int64 // positions per Origin (index 0 unused)
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
}

// Stats reads every entry of the book and counts them per depth and per
// origin. An entry that cannot be decoded ends it with a *CorruptError
// naming its key.
func (b *Book) Stats() (Stats, error) {
	st := Stats{Board: b.board.String(), FormatVersion: FormatVersion}
	byDepth := make([]DepthStats, b.board.Cells()+1)
	err := b.scan(0, b.board.Cells(), func(k, v []byte) error {
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
	m := b.db.Metrics()
	return m.DiskSpaceUsage(), m.Table.Local.LiveSize
}

// DepthRange returns the shallowest and the deepest depth holding an
// entry, and false if the book holds none. It reads two keys, not the
// whole book.
func (b *Book) DepthRange() (lo, hi int, ok bool, err error) {
	if err := b.check(false); err != nil {
		return 0, 0, false, err
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

// WriteText writes st as a table, one line per depth, then the totals and
// the size on disk.
func (st *Stats) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "depth\tentries\tsolved\tderived\timported\t\n")
	for _, d := range st.Depths {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t\n", d.Depth, d.Entries,
			d.ByOrigin[OriginSolved], d.ByOrigin[OriginDerived], d.ByOrigin[OriginImported])
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t\n", st.Entries,
		st.ByOrigin[OriginSolved], st.ByOrigin[OriginDerived], st.ByOrigin[OriginImported])
	if err := tw.Flush(); err != nil {
		return err
	}
	perEntry := 0.0
	if st.Entries > 0 {
		perEntry = float64(st.TableBytes) / float64(st.Entries)
	}
	_, err := fmt.Fprintf(w, "board %s, format %d, %d jobs\ndisk %d bytes (tables %d bytes, %.2f bytes/entry)\n",
		st.Board, st.FormatVersion, st.Jobs, st.DiskBytes, st.TableBytes, perEntry)
	return err
}
