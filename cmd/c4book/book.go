package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/books"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/solver"
)

const bookLong = `Read, check and convert an opening book.

The book is a Pebble database in a directory: --book PATH, or the key
book.path (default c4book.db). It knows its board size, so the commands
that read it need no --width and --height; given, they must match it.
get, stats, export, verify, digest and checkpoint open the book
read-only: several can run at once. While a job (generate, coordinator) writes the book,
they read the newest snapshot the job left in it (every
book.snapshot-interval), saying so on standard error; a job that has left
none yet is an error. import, restore, compact and revoke write the
book, and cannot while a job does.`

// newBookCommand builds "c4book book" and its subcommands.
func newBookCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "book",
		Short: "Look up, import, export, verify, digest, checkpoint, compact and revoke in the opening book",
		Long:  bookLong,
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	pf := cmd.PersistentFlags()
	keyFlag(pf, "book", "book.path", config.Default().Book.Path, "opening book at `PATH`, a directory")
	cmd.AddCommand(
		newBookGetCommand(a),
		newBookStatsCommand(a),
		newBookExportCommand(a),
		newBookImportCommand(a),
		newBookVerifyCommand(a),
		newBookDigestCommand(a),
		newBookPackCommand(a),
		newBookCheckpointCommand(a),
		newBookRestoreCommand(a),
		newBookCompactCommand(a),
		newBookRevokeCommand(a),
	)
	return cmd
}

// bookMode says how a command opens the book.
type bookMode int

const (
	bookReadOnly  bookMode = iota // read-only; the book must exist
	bookReadWrite                 // for writing; the book must exist
	bookCreate                    // for writing; a missing book is made
)

// readBook loads the command's configuration and opens its book
// (book.path) read-only: the prologue of every command that reads a book.
func readBook(cmd *cobra.Command) (config.Config, *book.Book, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return cfg, nil, err
	}
	bk, err := openBook(cmd, cfg, bookPath(cfg), bookReadOnly)
	return cfg, bk, err
}

// openBook opens the book at path for cmd. A book is made (bookCreate) for
// the configured board; an existing one must be of that board only if
// cmd's --width or --height was given. Errors say what to do.
func openBook(cmd *cobra.Command, cfg config.Config, path string, mode bookMode) (*book.Book, error) {
	var want *solver.Board
	if mode == bookCreate || boardFlagsGiven(cmd) {
		b, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
		if err != nil {
			return nil, fmt.Errorf("board.width, board.height: %w", err)
		}
		want = b
	}
	bk, err := book.Open(path, &book.Options{ReadOnly: mode == bookReadOnly, Create: mode == bookCreate, Board: want,
		CacheBytes: int64(cfg.Book.CacheSize), MemTableBytes: int64(cfg.Book.MemTableSize)})
	switch {
	case errors.Is(err, book.ErrNotExist) && mode == bookReadWrite && cmd.Flags().Lookup("create") != nil:
		return nil, fmt.Errorf("book %s does not exist (--create makes it)", path)
	case errors.Is(err, book.ErrNotExist):
		return nil, fmt.Errorf("book %s does not exist", path)
	case errors.Is(err, book.ErrBoardMismatch):
		if other, oerr := bookBoard(path); oerr == nil {
			return nil, boardMismatchError(path, other, want)
		}
		return nil, err
	case err != nil:
		return nil, err
	}
	if t, ok := bk.SnapshotTime(); ok {
		fmt.Fprintf(cmd.ErrOrStderr(), "The book %s is being written: reading its snapshot of %s (%s ago).\n",
			path, t.Local().Format(time.DateTime), time.Since(t).Round(time.Second))
	}
	return bk, nil
}

// boardFlagsGiven reports whether --width or --height is on cmd's command
// line.
func boardFlagsGiven(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("width") || cmd.Flags().Changed("height")
}

// bookBoard returns the board of the book at path, opened read-only for a
// moment.
func bookBoard(path string) (*solver.Board, error) {
	bk, err := book.Open(path, &book.Options{ReadOnly: true, CacheBytes: 1 << 20})
	if err != nil {
		return nil, err
	}
	defer bk.Close()
	return bk.Board(), nil
}

// boardMismatchError says that the book at path holds positions of board
// have, not of want, and how to use it.
func boardMismatchError(path string, have, want *solver.Board) error {
	return fmt.Errorf("%w: book %s holds %v positions, not %v (give --width %d --height %d to use it)",
		book.ErrBoardMismatch, path, have, want, have.Width(), have.Height())
}

// closeBook closes bk and returns err, or the error of Close if err is
// nil.
func closeBook(bk *book.Book, err error) error {
	if cerr := bk.Close(); err == nil {
		err = cerr
	}
	return err
}

// bookPath returns the path of the book of cfg.
func bookPath(cfg config.Config) string { return cfg.Book.Path }

// openReadingBook opens the book that serve reads: book.path when it was
// given (a flag, the environment or the config file), else the deepest
// book shipped with c4book for the configured board (package books). It
// returns whether the book is a shipped one.
func openReadingBook(cmd *cobra.Command, cfg config.Config) (*book.Book, bool, error) {
	if cfg.Book.PathGiven {
		bk, err := openBook(cmd, cfg, bookPath(cfg), bookReadOnly)
		return bk, false, err
	}
	bk, err := openShipped(cfg)
	if err != nil {
		return nil, false, fmt.Errorf("%w; give --book PATH", err)
	}
	return bk, true, nil
}

// openShipped opens the deepest book shipped for the configured board.
func openShipped(cfg config.Config) (*book.Book, error) {
	b, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
	if err != nil {
		return nil, fmt.Errorf("board.width, board.height: %w", err)
	}
	return books.Open(b)
}
