package book

import (
	"fmt"
	"io"
	"text/tabwriter"
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
	m := b.db.Metrics()
	st.DiskBytes = m.DiskSpaceUsage()
	st.TableBytes = m.Table.Local.LiveSize
	return st, nil
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
