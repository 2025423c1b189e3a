package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

const bookVerifyLong = `Check that the book is consistent, and re-solve a sample of it.

Every entry must decode and be a position of the book's board with a
score possible at its depth. Every entry whose children are all in the
book (or are immediate wins or full boards) must equal the negamax of its
children's scores. --sample N entries chosen at random (among those with
at least --sample-min-depth stones) are solved again and must equal the
solver's score; --seed S repeats a choice (by default a random seed,
printed).

Each problem is printed as it is found, then what was checked. The
command fails if any entry is corrupt or wrong.`

const bookVerifyExample = `  c4book book verify
  c4book book verify --sample 1000 --sample-min-depth 8 --seed 42`

// newBookVerifyCommand builds "c4book book verify".
func newBookVerifyCommand(a *app) *cobra.Command {
	var sample, minDepth int
	var seed uint64
	cmd := &cobra.Command{
		Use:     "verify [--sample N] [--seed S] [--book PATH]",
		Short:   "Check every entry against its children, and re-solve a sample",
		Long:    bookVerifyLong,
		Example: bookVerifyExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sample < 0 || minDepth < 0 {
				return newUsageError(cmd, errors.New("--sample and --sample-min-depth must be 0 or more"))
			}
			if !cmd.Flags().Changed("seed") {
				seed = rand.Uint64()
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), bookReadOnly)
			if err != nil {
				return err
			}
			opts := &book.VerifyOptions{Sample: sample, SampleMinDepth: minDepth, Seed: seed, Log: a.stdout}
			if sample > 0 {
				if opts.Solver, err = solver.New(bk.Board(), int64(cfg.Solver.TTSize)); err != nil {
					return closeBook(bk, fmt.Errorf("solver.tt-size: %w", err))
				}
			}
			return closeBook(bk, verifyBook(cmd, bk, opts, a.stdout))
		},
	}
	cmd.Flags().IntVar(&sample, "sample", 0, "re-solve `N` entries chosen at random")
	cmd.Flags().IntVar(&minDepth, "sample-min-depth", 0, "choose the sample among entries of at least `N` stones")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed of the sample's choice (default: random)")
	addTTSizeFlag(cmd.Flags())
	return cmd
}

// verifyBook runs bk.Verify and prints what it checked.
func verifyBook(cmd *cobra.Command, bk *book.Book, opts *book.VerifyOptions, w io.Writer) error {
	r, err := bk.Verify(cmd.Context(), opts)
	if err != nil {
		if cmd.Context().Err() != nil {
			return errInterrupted
		}
		return err
	}
	fmt.Fprintf(w, "%d entries read, %d corrupt\n", r.Entries, r.Corrupt)
	fmt.Fprintf(w, "%d checked against their children, %d not (a child is missing)\n", r.ChildChecked, r.ChildSkipped)
	if opts.Sample > 0 {
		fmt.Fprintf(w, "%d re-solved (seed %d, depth %d and more)\n", r.Resolved, opts.Seed, opts.SampleMinDepth)
	}
	fmt.Fprintf(w, "%d disagreements\n", r.Disagreements)
	if !r.OK() {
		return fmt.Errorf("book %s: %d corrupt entries, %d wrong scores", bk.Path(), r.Corrupt, r.Disagreements)
	}
	return nil
}
