package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/packed"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/solver"
)

const bookStatsLong = `Print what the book holds: a table of the positions of each depth
(entries, and how many were solved by a worker, scored at once (the player
to move makes four), derived from their children or imported), the
totals, the board, the size on disk, and the generation jobs the book
records (id, state, root, depth, positions planned, solved and derived).

It reads every entry of the book: on a large book it takes a while.`

// newBookStatsCommand builds "c4book book stats".
func newBookStatsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats [--book PATH]",
		Short: "Print the entries per depth, the size and the jobs of the book",
		Long:  bookStatsLong,
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			return closeBook(bk, writeBookStats(bk, a.stdout))
		},
	}
}

// writeBookStats writes the statistics of bk and its jobs to w.
func writeBookStats(bk *book.Book, w io.Writer) error {
	st, err := bk.Stats()
	if err != nil {
		return err
	}
	jobs, err := bk.Jobs()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "book %s\n", bk.Path())
	if err := writeStatsTable(w, &st); err != nil {
		return err
	}
	if pk := bk.Packed(); pk != nil {
		return writePackedStats(w, pk)
	}
	if len(jobs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "job\tstate\troot\tdepth\tplanned\tsolved\tderived\tupdated\t")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", j.ID, j.State, solver.FormatMoves(j.Root), j.Depth,
			human.Count(j.Planned), human.Count(j.Solved), human.Count(j.Derived), j.Updated.Format("2006-01-02 15:04:05Z07:00"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Message != "" {
			fmt.Fprintf(w, "job %s: %s\n", j.ID, j.Message)
		}
	}
	return nil
}

// writeStatsTable writes st as a table, one line per depth, then the
// totals, the board and the size on disk.
func writeStatsTable(w io.Writer, st *book.Stats) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "depth\tentries\tsolved\tat once\tderived\timported\t\n")
	row := func(depth string, entries int64, by [4]int64, atOnce int64) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", depth, human.Count(entries),
			human.Count(by[book.OriginSolved]), human.Count(atOnce),
			human.Count(by[book.OriginDerived]-atOnce), human.Count(by[book.OriginImported]))
	}
	for _, d := range st.Depths {
		row(strconv.Itoa(d.Depth), d.Entries, d.ByOrigin, d.AtOnce)
	}
	row("all", st.Entries, st.ByOrigin, st.AtOnce)
	if err := tw.Flush(); err != nil {
		return err
	}
	perEntry := 0.0
	if st.Entries > 0 {
		perEntry = float64(st.TableBytes) / float64(st.Entries)
	}
	_, err := fmt.Fprintf(w, "board %s, format %d, %d jobs\ndisk %s bytes (tables %s bytes, %.2f bytes/entry)\n",
		st.Board, st.FormatVersion, st.Jobs, human.Count(st.DiskBytes), human.Count(st.TableBytes), perEntry)
	return err
}

// writePackedStats writes what the header of a packed book says.
func writePackedStats(w io.Writer, pk *packed.File) error {
	bits := 0.0
	if pk.Positions() > 0 {
		bits = 8 * float64(pk.Size()) / float64(pk.Positions())
	}
	_, err := fmt.Fprintf(w, "packed book, format %d: the set of root %s to %d stones, %s positions, %.2f bits a position\ndigest %x (of the book it was packed from)\n",
		packed.FormatVersion, solver.FormatMoves(pk.Root()), pk.Depth(), human.Count(pk.Positions()), bits, pk.Digest())
	return err
}
