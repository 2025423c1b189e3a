package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/cmd/c4book/internal/bench"
	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/solver"
)

const benchLong = `Solve every position of each FILE of "moves score" lines (Pons' test
sets), check each score and print, per file: the set name, the number of
positions, the number of wrong scores, the mean time and mean number of
nodes per position, thousands of positions per second and millions of
nodes per second.

As in Pons' benchmark, the transposition table is cleared before each
position (--warm keeps it) and only the solve is timed. Each wrong score
and each line that cannot be read is reported on standard error, and makes
the command fail. On a terminal, progress is shown every few seconds.
Ctrl-C stops between positions and still prints what was measured.

--cpuprofile writes a CPU profile of the whole run (go tool pprof reads
it); scripts/tools/pgo.sh makes the compiler's profile,
cmd/c4book/default.pgo, from such runs.`

// newBenchCommand builds "c4book bench".
func newBenchCommand(a *app) *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:     "bench [--limit N] [--json] [--warm] [--tt-size SIZE] [--threads N] [--cpuprofile FILE] FILE...",
		Short:   "Measure the solver on reference sets of positions",
		Long:    benchLong,
		Example: "  c4book bench --limit 100 ../shared/testdata/pons/Test_L3_R1 ../shared/testdata/pons/Test_L2_R1",
		Args:    checkArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, files []string) (err error) {
			if opts.limit < 0 {
				return newUsageError(cmd, fmt.Errorf("--limit %d: must be 0 (all) or more", opts.limit))
			}
			if opts.cpuProfile != "" {
				stop, perr := startCPUProfile(opts.cpuProfile)
				if perr != nil {
					return perr
				}
				// err is the command's result: a profile that cannot be
				// closed fails the command too.
				defer func() { err = errors.Join(err, stop()) }()
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			s, err := newSolver(cfg)
			if err != nil {
				return err
			}
			defer startHelpers(s, cfg.Solver.Threads)()
			if console.IsTerminal(a.stderr) {
				opts.solve.Progress = a.stderr
			}
			return runBench(cmd.Context(), s, files, opts, a.stdout, a.stderr)
		},
	}
	cmd.Flags().IntVar(&opts.limit, "limit", 0, "solve only the first `N` positions of each file (0: all)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON object per file")
	cmd.Flags().BoolVar(&opts.solve.Warm, "warm", false, "keep the transposition table from one position to the next")
	cmd.Flags().StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE`")
	addTTSizeFlag(cmd.Flags())
	addThreadsFlag(cmd.Flags())
	return cmd
}

// startCPUProfile starts writing a CPU profile to the file at path, which
// it creates, and returns the function that ends the profile and closes
// the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// benchOptions are the settings of one bench run.
type benchOptions struct {
	limit      int           // positions of each file to solve, 0 for all
	json       bool          // one JSON object per file instead of a table
	solve      bench.Options // the table kept between positions or not, and the progress
	cpuProfile string        // where to write a CPU profile of the run, or ""
}

// runBench benchmarks s on each file and prints a result per file. All
// files are read first, so a missing file fails before any solving.
func runBench(ctx context.Context, s *solver.Solver, files []string, opts benchOptions, stdout, stderr io.Writer) error {
	sets := make([][]bench.Case, len(files))
	unreadable := make([]int, len(files))
	for i, file := range files {
		var err error
		sets[i], unreadable[i], err = bench.ReadFile(s.Board(), file, opts.limit, stderr)
		if err != nil {
			return err
		}
	}
	if !opts.json {
		if err := bench.WriteHeader(stdout); err != nil {
			return err
		}
	}
	var mismatches, bad int
	for i, file := range files {
		res := bench.Solve(ctx, s, file, sets[i], opts.solve, stderr)
		res.Unreadable = unreadable[i]
		mismatches += res.Mismatches
		bad += res.Unreadable
		if err := bench.WriteResult(stdout, res, opts.json); err != nil {
			return err
		}
		if res.Interrupted {
			return errInterrupted
		}
	}
	if mismatches > 0 || bad > 0 {
		return fmt.Errorf("%d wrong scores, %d unreadable lines (see the messages above)", mismatches, bad)
	}
	return nil
}
