package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
)

const bookImportLong = `Store the positions of "moves score" lines in the book: FILE, or standard
input when FILE is "-" or absent. The output of "c4book solve" and of
"c4book book export" are such lines; the empty board is "-". Blank lines
and lines starting with "#" are skipped. The entries are marked imported
and written in synced batches of 10,000: after a crash, what was written
stays.

A line is bad if it is not "moves score", its moves cannot be played,
its game is over, or its score is impossible for the position (outside
the range possible at its depth, or not the score of a win at once when
the player to move can make four). A position the book holds keeps its
score: a line with the same score writes nothing, and one with another
score (or a later line for a position with another score) is a conflict,
unless --overwrite is given. Each bad or conflicting line is reported on
standard error with its number and skipped; the command fails at the end.

The book must exist, unless --create is given: then a missing book is
made for the board of --width and --height (board.width, board.height).`

const bookImportExample = `  c4book solve < positions | c4book book import --create --book 7x6.db
  c4book book import --width 5 --height 4 --create book.txt`

// newBookImportCommand builds "c4book book import".
func newBookImportCommand(a *app) *cobra.Command {
	var create, overwrite bool
	cmd := &cobra.Command{
		Use:     "import [--create] [--overwrite] [--book PATH] [FILE]",
		Short:   "Store \"moves score\" lines in the book",
		Long:    bookImportLong,
		Example: bookImportExample,
		Args:    checkArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			in, name := a.stdin, "standard input"
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in, name = f, args[0]
			} else if isTerminal(a.stdin) {
				fmt.Fprintln(a.stderr, `Reading "moves score" lines from standard input; end with Ctrl-D.`)
			}
			mode := bookReadWrite
			if create {
				mode = bookCreate
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), mode)
			if err != nil {
				return err
			}
			return closeBook(bk, importBook(cmd, bk, in, name, overwrite, a.stdout, a.stderr))
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "make the book if it does not exist, for the board of --width and --height")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace a score the book holds with a different one, instead of refusing the line")
	return cmd
}

// importBook imports the lines of in, named name, into bk, reporting bad
// lines on stderr and the counts on stdout.
func importBook(cmd *cobra.Command, bk *book.Book, in io.Reader, name string, overwrite bool, stdout, stderr io.Writer) error {
	cr := newCtxReader(cmd.Context(), in)
	defer cr.Close()
	st, err := bk.ImportText(cr, &book.ImportOptions{Errors: stderr, Overwrite: overwrite})
	fmt.Fprintf(stdout, "%s: %s lines: %s entries written, %s held already, %s conflicting, %s skipped (blank or comment), %s bad\n",
		name, formatCount(st.Lines), formatCount(st.Entries), formatCount(st.Held), formatCount(st.Conflicts), formatCount(st.Skipped), formatCount(st.Bad))
	switch {
	case errors.Is(err, errInterrupted):
		return errInterrupted
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case st.AnyBad():
		return fmt.Errorf("%s: %d of %d lines are bad or conflicting and were skipped (see the messages above)", name, st.Bad+st.Conflicts, st.Lines)
	}
	return nil
}
