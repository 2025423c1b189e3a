package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

const bookCompactLong = `Rewrite the whole book into Pebble's bottom level: the smallest it gets
on disk, and the fastest to read (a lookup touches one table). Prints the
bytes of the book's tables, and of all the files of its directory, before
and after. It needs free disk space of about twice the book's size while
it runs.`

// newBookCompactCommand builds "c4book book compact".
func newBookCompactCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "compact [--book PATH]",
		Short: "Rewrite the book to its smallest size on disk",
		Long:  bookCompactLong,
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			path := bookPath(cfg)
			before, _ := dirBytes(path) // an error is Open's to report
			bk, err := openBook(cmd, cfg, path, bookReadWrite)
			if err != nil {
				return err
			}
			if err := closeBook(bk, compactBook(cmd, bk, a.stdout)); err != nil {
				return err
			}
			after, err := dirBytes(path)
			if err != nil {
				return err
			}
			// Pebble deletes the replaced tables in the background: the
			// directory is measured once the book is closed.
			fmt.Fprintf(a.stdout, "directory: %s bytes before, %s after\n", human.Count(before), human.Count(after))
			return nil
		},
	}
}

// compactBook compacts bk and prints the bytes of its tables before and
// after.
func compactBook(cmd *cobra.Command, bk *book.Book, w io.Writer) error {
	_, before := bk.DiskUsage()
	if err := bk.Compact(cmd.Context()); err != nil {
		if cmd.Context().Err() != nil {
			return errInterrupted
		}
		return err
	}
	st, err := bk.Stats()
	if err != nil {
		return err
	}
	perEntry := 0.0
	if st.Entries > 0 {
		perEntry = float64(st.TableBytes) / float64(st.Entries)
	}
	fmt.Fprintf(w, "tables: %s bytes before, %s after (%s entries, %.2f bytes/entry)\n",
		human.Count(before), human.Count(st.TableBytes), human.Count(st.Entries), perEntry)
	return nil
}

// dirBytes returns the total size of the files of directory dir (their
// length, not the blocks the file system gives them).
func dirBytes(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		info, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		if info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n, nil
}
