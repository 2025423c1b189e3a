package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/solver"
)

const bookVerifyLong = `Check that the book is consistent, and re-solve some or all of it.

Every entry must decode and be a position of the book's board with a
score possible at its depth. Every entry whose children are all in the
book (or are immediate wins or full boards) must equal the negamax of its
children's scores.

That check cannot see a wrong score a worker solved: its children are
not in the book. Two ways to solve entries again, each must equal the
solver's score:

  --sample N   N entries chosen at random among those with at least
               --sample-min-depth stones, stratified: each worker that
               solved entries, and the derived entries, get an equal share,
               every depth at least one. --seed S repeats a choice (by
               default a random seed, printed).
  --solved     every entry a worker solved (with at least
               --sample-min-depth stones): it finds every wrong one, and
               costs about the CPU the job spent solving them
               (docs/benchmarks.md). With --sample too, the sample is
               drawn from the other entries.

--concurrency N solves N entries at once, sharing one table of
--tt-size (default: one per CPU). Progress is shown on standard error.

Each problem is printed as it is found, then what was checked. The
command fails if any entry is corrupt or wrong.`

const bookVerifyExample = `  c4book book verify
  c4book book verify --sample 1000 --sample-min-depth 8 --seed 42
  c4book book verify --solved`

// newBookVerifyCommand builds "c4book book verify".
func newBookVerifyCommand(a *app) *cobra.Command {
	var sample, minDepth, concurrency int
	var seed uint64
	var solved bool
	cmd := &cobra.Command{
		Use:     "verify [--sample N] [--solved] [--seed S] [--book PATH]",
		Short:   "Check every entry against its children, and re-solve a sample or every solved entry",
		Long:    bookVerifyLong,
		Example: bookVerifyExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sample < 0 || minDepth < 0 || concurrency < 0 {
				return newUsageError(cmd, errors.New("--sample, --sample-min-depth and --concurrency must be 0 or more"))
			}
			if concurrency == 0 {
				concurrency = runtime.NumCPU()
			}
			if !cmd.Flags().Changed("seed") {
				seed = rand.Uint64()
			}
			cfg, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			opts := &book.VerifyOptions{Sample: sample, SampleMinDepth: minDepth, Solved: solved, Seed: seed,
				Threads: concurrency, Log: a.stdout}
			if sample > 0 || solved {
				if opts.Solver, err = solver.New(bk.Board(), int64(cfg.Solver.TTSize)); err != nil {
					return closeBook(bk, fmt.Errorf("solver.tt-size: %w", err))
				}
			}
			return closeBook(bk, verifyBook(cmd, bk, opts, a.stdout))
		},
	}
	cmd.Flags().IntVar(&sample, "sample", 0, "re-solve `N` entries chosen at random, stratified by worker and depth")
	cmd.Flags().BoolVar(&solved, "solved", false, "re-solve every entry a worker solved")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "re-solve `N` entries at once (default: one per CPU)")
	cmd.Flags().IntVar(&minDepth, "sample-min-depth", 0, "choose the sample among entries of at least `N` stones")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed of the sample's choice (default: random)")
	addTTSizeFlag(cmd.Flags())
	return cmd
}

// verifyBook runs bk.Verify and prints what it checked, and on standard
// error the progress of its re-solving.
func verifyBook(cmd *cobra.Command, bk *book.Book, opts *book.VerifyOptions, w io.Writer) error {
	if opts.Solver != nil {
		opts.Progress = progress.NewStep(cmd.ErrOrStderr(), "re-solved", "entries", 10*time.Second).Update
	}
	r, err := bk.Verify(cmd.Context(), opts)
	if err != nil {
		if cmd.Context().Err() != nil {
			return errInterrupted
		}
		return err
	}
	writeVerifyReport(w, r, opts)
	if !r.OK() {
		return fmt.Errorf("book %s: %s corrupt entries, %s wrong scores", bk.Path(), human.Count(r.Corrupt), human.Count(r.Disagreements))
	}
	return nil
}

// writeVerifyReport writes the counts of r, a Verify with opts.
func writeVerifyReport(w io.Writer, r book.VerifyReport, opts *book.VerifyOptions) {
	fmt.Fprintf(w, "%s entries read, %s corrupt\n", human.Count(r.Entries), human.Count(r.Corrupt))
	fmt.Fprintf(w, "%s checked against their children, %s not (a child is missing)\n", human.Count(r.ChildChecked), human.Count(r.ChildSkipped))
	switch {
	case opts.Solved:
		fmt.Fprintf(w, "%s re-solved: every solved entry of depth %d and more (%s)", human.Count(r.Resolved), opts.SampleMinDepth, human.Count(r.SolvedEntries))
		if opts.Sample > 0 {
			fmt.Fprintf(w, ", and a sample of the others (seed %d)", opts.Seed)
		}
		fmt.Fprintln(w)
	case opts.Sample > 0:
		fmt.Fprintf(w, "%s re-solved (seed %d, depth %d and more)\n", human.Count(r.Resolved), opts.Seed, opts.SampleMinDepth)
	}
	fmt.Fprintf(w, "%s disagreements\n", human.Count(r.Disagreements))
}
