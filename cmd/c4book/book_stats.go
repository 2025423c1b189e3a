package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

const bookStatsLong = `Print what the book holds: a table of the positions of each depth
(entries, and how many were solved by a worker, derived from their
children or imported), the totals, the board, the size on disk, and the
generation jobs the book records (id, state, root, depth, positions
planned, solved and derived).

It reads every entry of the book: on a large book it takes a while.`

// newBookStatsCommand builds "c4book book stats".
func newBookStatsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats [--book PATH]",
		Short: "Print the entries per depth, the size and the jobs of the book",
		Long:  bookStatsLong,
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), bookReadOnly)
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
	if err := st.WriteText(w); err != nil {
		return err
	}
	if len(jobs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "job\tstate\troot\tdepth\tplanned\tsolved\tderived\tupdated\t")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t\n", j.ID, j.State, solver.FormatMoves(j.Root), j.Depth,
			j.Planned, j.Solved, j.Derived, j.Updated.Format("2006-01-02 15:04:05Z07:00"))
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
