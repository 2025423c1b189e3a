package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/ctxio"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

const bookImportLong = `Store the positions of "moves score" lines, or of a binary export, in the
book: FILE, or standard input when FILE is "-" or absent. The output of
"c4book solve" and of "c4book book export" are such lines; the empty board
is "-". Blank lines and lines starting with "#" are skipped. The entries
are marked imported and written in synced batches of 10,000: after a
crash, what was written stays.

A line is bad if it is not "moves score", its moves cannot be played,
its game is over, or its score is impossible for the position (outside
the range possible at its depth, or not the score of a win at once when
the player to move can make four). A position the book holds keeps its
score: a line with the same score writes nothing, and one with another
score (or a later line for a position with another score) is a conflict,
unless --overwrite is given. Each bad or conflicting line is reported on
standard error with its number and skipped; the command fails at the end.

A binary export ("book export --format bin") is recognised by its first
bytes. Its entries keep their origins (solved, derived, imported), and
conflicts are handled as for lines, reported with the record's index. The
file is checked as it is read: a damaged or truncated one stops the
import at the first bad record, with its index and what is wrong, and
fails it; the batches written before stay. A file of another board than
the book's is refused.

The book must exist, unless --create is given: then a missing book is
made for the board of --width and --height (board.width, board.height),
or, for a binary file, of the file's board.`

const bookImportExample = `  c4book solve < positions | c4book book import --create --book 7x6.db
  c4book book import --width 5 --height 4 --create book.txt
  c4book book import --create --book copy.db book.bin`

// newBookImportCommand builds "c4book book import".
func newBookImportCommand(a *app) *cobra.Command {
	var create, overwrite bool
	cmd := &cobra.Command{
		Use:     "import [--create] [--overwrite] [--book PATH] [FILE]",
		Short:   "Store \"moves score\" lines or a binary export in the book",
		Long:    bookImportLong,
		Example: bookImportExample,
		Args:    checkArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			var in io.Reader = a.stdin
			name := "standard input"
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in, name = f, args[0]
			} else if console.IsTerminal(a.stdin) {
				fmt.Fprintln(a.stderr, `Reading "moves score" lines from standard input; end with Ctrl-D.`)
			}
			cr := ctxio.NewReader(cmd.Context(), in)
			defer cr.Close()
			imp := bookImport{name: name, in: bufio.NewReaderSize(cr, 64<<10), overwrite: overwrite, stdout: a.stdout, stderr: a.stderr}
			// A binary file says its board: a book made for it is of that
			// board. A terminal is never a binary file, and is not made to
			// wait for the bytes that would tell.
			if !console.IsTerminal(in) {
				if imp.binary, err = imp.binaryHeader(); err != nil {
					return err
				}
			}
			mode := bookReadWrite
			if create {
				mode = bookCreate
			}
			if imp.binary != nil {
				b := imp.binary.Board
				if boardFlagsGiven(cmd) && (cfg.Board.Width != b.Width() || cfg.Board.Height != b.Height()) {
					return fmt.Errorf("%s: %w: the file holds %v positions, not %dx%d", name, book.ErrBoardMismatch, b, cfg.Board.Width, cfg.Board.Height)
				}
				cfg.Board.Width, cfg.Board.Height = b.Width(), b.Height()
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), mode)
			if err != nil {
				return err
			}
			return closeBook(bk, imp.run(bk))
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "make the book if it does not exist, for the board of --width and --height (of a binary file: its own)")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace a score the book holds with a different one, instead of refusing the line or record")
	return cmd
}

// bookImport is one run of "c4book book import".
type bookImport struct {
	name      string        // of the input, for messages
	in        *bufio.Reader // the input, interruptible
	binary    *bookfile.BinaryHeader
	overwrite bool
	stdout    io.Writer
	stderr    io.Writer
}

// binaryHeader returns the header of the input if it is a binary export,
// nil if it is not one, or the error of a damaged header. It reads nothing
// off the input.
func (imp *bookImport) binaryHeader() (*bookfile.BinaryHeader, error) {
	head, err := imp.in.Peek(bookfile.BinaryMagicLen)
	if !bookfile.IsBinary(head) {
		if errors.Is(err, ctxio.ErrStopped) {
			return nil, errInterrupted
		}
		return nil, nil // text, or a read error the text import meets
	}
	head, err = imp.in.Peek(bookfile.BinaryHeaderLen)
	if errors.Is(err, ctxio.ErrStopped) {
		return nil, errInterrupted
	}
	r, err := bookfile.NewBinaryReader(bytes.NewReader(head))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", imp.name, err)
	}
	h := r.Header()
	return &h, nil
}

// run imports the input into bk, reporting bad lines and conflicts on
// stderr and the counts on stdout.
func (imp *bookImport) run(bk *book.Book) error {
	opts := &bookfile.ImportOptions{Errors: imp.stderr, Overwrite: imp.overwrite}
	unit := "lines"
	var st bookfile.ImportStats
	var err error
	if imp.binary != nil {
		unit = "records"
		st, err = bookfile.ImportBinary(bk, imp.in, opts)
		fmt.Fprintf(imp.stdout, "%s: %s: %s entries written, %s held already, %s conflicting\n",
			imp.name, human.Counted(st.Lines, "record"), human.Count(st.Entries), human.Count(st.Held), human.Count(st.Conflicts))
	} else {
		st, err = bookfile.ImportText(bk, imp.in, opts)
		fmt.Fprintf(imp.stdout, "%s: %s: %s entries written, %s held already, %s conflicting, %s skipped (blank or comment), %s bad\n",
			imp.name, human.Counted(st.Lines, "line"), human.Count(st.Entries), human.Count(st.Held), human.Count(st.Conflicts), human.Count(st.Skipped), human.Count(st.Bad))
	}
	switch {
	case errors.Is(err, ctxio.ErrStopped):
		return errInterrupted
	case err != nil:
		return fmt.Errorf("%s: %w", imp.name, err)
	case st.AnyBad():
		return fmt.Errorf("%s: %d of %d %s are bad or conflicting and were skipped (see the messages above)", imp.name, st.Bad+st.Conflicts, st.Lines, unit)
	}
	return nil
}
