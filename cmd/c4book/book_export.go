package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

const bookExportLong = `Write the book in another format, to standard output or --out FILE.

--format text (the default) writes a line "moves score" per entry, in
order of depth: one game reaching the position (or its mirror image,
which shares the entry), and its score. The empty board is "-". The
lines can be read back by "c4book book import" and "c4book book get".

--format bin writes every entry, score and origin, in a binary file:
a 20-byte header (magic bytes, version, board, deepest depth, number of
records), then 11 bytes an entry, sorted by depth and key (not the
worker that solved an entry): "c4book book import" reads it back, entry
for entry, and
bookfile.BinaryReader and bookfile.LoadBinary read it in Go. Its layout:
docs/format.md, "Binary export". Refused on a terminal without --out.

--format pons writes the .book file of Pascal Pons' connect4 solver: a
hash table of 2^L+ slots (the smallest prime above 2^L) holding a partial
key and a one-byte score. The format is lossy: positions whose slot is
taken by a shallower one are left out, as are scores his format has no
value for, and the origins of scores are dropped. What was written and
what was lost is reported on standard error. --log-size L chooses the
table (21..27, the sizes his loader reads); by default the smallest whose
table is at most half full, or 27. What the format loses: docs/cli.md,
"c4book book export".

--max-depth N leaves out the positions with more than N stones.`

const bookExportExample = `  c4book book export > book.txt
  c4book book export --format bin --out book.bin
  c4book book export --format pons --max-depth 12 --out 7x6.book`

// newBookExportCommand builds "c4book book export".
func newBookExportCommand(a *app) *cobra.Command {
	var format, out string
	var maxDepth, logSize int
	cmd := &cobra.Command{
		Use:     "export [--format text|bin|pons] [--out FILE] [--max-depth N] [--book PATH]",
		Short:   "Write the book as \"moves score\" text, a binary file or Pons' .book file",
		Long:    bookExportLong,
		Example: bookExportExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case format != "text" && format != "bin" && format != "pons":
				return newUsageError(cmd, fmt.Errorf("--format %q: want text, bin or pons", format))
			case maxDepth < 0:
				return newUsageError(cmd, fmt.Errorf("--max-depth %d: must be 0 (all) or more", maxDepth))
			case logSize != 0 && format != "pons":
				return newUsageError(cmd, errors.New("--log-size is for --format pons"))
			case format != "text" && out == "" && console.IsTerminal(a.stdout):
				return newUsageError(cmd, fmt.Errorf("--format %s writes binary data: give --out FILE or redirect the output", format))
			}
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			e := bookExport{bk: bk, format: format, maxDepth: maxDepth, logSize: logSize, stderr: a.stderr}
			if out == "" {
				e.name = "standard output"
				return closeBook(bk, e.write(a.stdout))
			}
			e.name = out
			return closeBook(bk, writeFileAtomic(out, 0o644, e.write))
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "`FORMAT` of the output: text, bin or pons")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write to `FILE` instead of standard output")
	cmd.Flags().IntVar(&maxDepth, "max-depth", 0, "export only positions of at most `N` stones (0: all)")
	cmd.Flags().IntVar(&logSize, "log-size", 0, "pons: log2 of the table size, 21..27 (0: the smallest at most half full)")
	return cmd
}

// bookExport is one run of "c4book book export".
type bookExport struct {
	bk       *book.Book
	format   string
	maxDepth int // 0: all
	logSize  int // pons only; 0: default
	name     string
	stderr   io.Writer
}

// write exports the book to w and reports what it wrote on stderr.
func (e *bookExport) write(w io.Writer) error {
	maxDepth := e.bk.Board().Cells()
	if e.maxDepth > 0 {
		maxDepth = e.maxDepth
	}
	switch e.format {
	case "text":
		n, err := bookfile.ExportText(e.bk, w, 0, maxDepth)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s positions to %s\n", human.Count(n), e.name)
		return nil
	case "bin":
		h, err := bookfile.ExportBinary(e.bk, w, 0, maxDepth)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s positions of at most %d stones to %s: %s bytes, binary format version %d\n",
			human.Count(h.Records), h.Depth, e.name, human.Count(h.Size()), h.Version)
		return nil
	}
	r, err := bookfile.ExportPons(e.bk, w, &bookfile.PonsOptions{MaxDepth: e.maxDepth, LogSize: e.logSize})
	if err != nil {
		return err
	}
	writePonsReport(e.stderr, e.name, r)
	return nil
}

// writePonsReport says what a Pons export wrote and lost.
func writePonsReport(w io.Writer, name string, r bookfile.PonsReport) {
	pct := func(n int64) float64 {
		if r.Entries == 0 {
			return 0
		}
		return 100 * float64(n) / float64(r.Entries)
	}
	fmt.Fprintf(w, "wrote %s: %s of %s positions of at most %d stones (%.1f%%)\n", name, human.Count(r.Stored), human.Count(r.Entries), r.Depth, pct(r.Stored))
	fmt.Fprintf(w, "lost: %s to collisions (%.1f%%), %s with a score the format cannot hold\n", human.Count(r.Collided), pct(r.Collided), human.Count(r.OutOfRange))
	// The load is what the loss formula of docs/cli.md takes: entries
	// offered a slot, the lost ones included, not the slots filled.
	fmt.Fprintf(w, "table: log2 size %d, %s slots, %.1f%% filled (load %.2f entries a slot), %d-byte keys, 1-byte values, %s bytes\n",
		r.LogSize, human.Count(r.Size), 100*float64(r.Stored)/float64(r.Size), float64(r.Entries)/float64(r.Size), r.KeyBytes, human.Count(r.Bytes))
}

// writeFileAtomic writes the file name, of mode, with write: into a
// temporary file of the same directory, renamed to name once complete. A
// failed write leaves no file behind and an existing name untouched.
func writeFileAtomic(name string, mode os.FileMode, write func(io.Writer) error) error {
	return writeFileAtomicChecked(name, mode, write, nil)
}

// writeFileAtomicChecked is writeFileAtomic that calls check, if set, with
// the temporary file's path once it is written and synced: the file takes
// its name only if check returns nil.
func writeFileAtomicChecked(name string, mode os.FileMode, write func(io.Writer) error, check func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && check != nil {
		err = check(f.Name())
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode) // CreateTemp made it 0600
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
