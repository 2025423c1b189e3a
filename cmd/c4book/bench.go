package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
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
Ctrl-C stops between positions and still prints what was measured.`

// benchProgressEvery is how often progress is shown on a terminal.
const benchProgressEvery = 5 * time.Second

// newBenchCommand builds "c4book bench".
func newBenchCommand(a *app) *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:     "bench [--limit N] [--json] [--warm] [--tt-size SIZE] [--threads N] FILE...",
		Short:   "Measure the solver on reference sets of positions",
		Long:    benchLong,
		Example: "  c4book bench --limit 100 ../shared/testdata/pons/Test_L3_R1 ../shared/testdata/pons/Test_L2_R1",
		Args:    checkArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, files []string) error {
			if opts.limit < 0 {
				return newUsageError(cmd, fmt.Errorf("--limit %d: must be 0 (all) or more", opts.limit))
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
			opts.progress = isTerminal(a.stderr)
			return runBench(cmd.Context(), s, files, opts, a.stdout, a.stderr)
		},
	}
	cmd.Flags().IntVar(&opts.limit, "limit", 0, "solve only the first `N` positions of each file (0: all)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON object per file")
	cmd.Flags().BoolVar(&opts.warm, "warm", false, "keep the transposition table from one position to the next")
	addTTSizeFlag(cmd.Flags())
	addThreadsFlag(cmd.Flags())
	return cmd
}

// benchOptions are the settings of one bench run.
type benchOptions struct {
	limit    int  // positions of each file to solve, 0 for all
	json     bool // one JSON object per file instead of a table
	warm     bool // keep the table between positions
	progress bool // show progress on stderr
}

// benchCase is a position of a set and its expected score.
type benchCase struct {
	book.PositionLine
	want int
}

// benchResult is what bench measured on one file. The JSON field names
// are part of the command's interface.
type benchResult struct {
	Set         string  `json:"set"`           // base name of the file
	File        string  `json:"file"`          // path as given
	Positions   int     `json:"positions"`     // positions solved
	Mismatches  int     `json:"mismatches"`    // wrong scores
	Unreadable  int     `json:"unreadable"`    // lines that are not "moves score"
	MeanNS      float64 `json:"mean_ns"`       // mean solve time per position, nanoseconds
	MeanNodes   float64 `json:"mean_nodes"`    // mean nodes searched per position
	KPosPerSec  float64 `json:"kpos_per_sec"`  // thousands of positions solved per second
	NodesPerSec float64 `json:"nodes_per_sec"` // nodes searched per second
	Warm        bool    `json:"warm"`          // the table was kept between positions
	Interrupted bool    `json:"interrupted,omitempty"`

	elapsed time.Duration // total solve time
	nodes   uint64        // total nodes
}

// runBench benchmarks s on each file and prints a result per file. All
// files are read first, so a missing file fails before any solving.
func runBench(ctx context.Context, s *solver.Solver, files []string, opts benchOptions, stdout, stderr io.Writer) error {
	sets := make([][]benchCase, len(files))
	unreadable := make([]int, len(files))
	for i, file := range files {
		var err error
		sets[i], unreadable[i], err = readBenchFile(s.Board(), file, opts.limit, stderr)
		if err != nil {
			return err
		}
	}
	if !opts.json {
		fmt.Fprintf(stdout, "%-16s %9s %10s %10s %12s %10s %10s\n",
			"set", "positions", "mismatches", "mean time", "mean nodes", "kpos/s", "Mnodes/s")
	}
	var mismatches, bad int
	for i, file := range files {
		res := benchFile(ctx, s, file, sets[i], opts, stderr)
		res.Unreadable = unreadable[i]
		mismatches += res.Mismatches
		bad += res.Unreadable
		if err := printBenchResult(stdout, res, opts.json); err != nil {
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

// readBenchFile reads the first limit positions of file (all if limit is
// 0), reporting each unreadable line on stderr and counting them.
func readBenchFile(b *solver.Board, file string, limit int, stderr io.Writer) (cases []benchCase, unreadable int, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	err = book.ScanLines(f, func(l book.Line) bool {
		if l.Ignorable() {
			return true
		}
		pl, err := book.ParsePositionLine(b, l)
		want := 0
		if err == nil {
			want, err = strconv.Atoi(pl.Score)
			if pl.Score == "" {
				err = fmt.Errorf(`want "moves score", got %s`, l.Quote())
			} else if err != nil {
				err = fmt.Errorf("score %q is not an integer", pl.Score)
			}
		}
		if err != nil {
			unreadable++
			fmt.Fprintf(stderr, "%s:%d: %v\n", file, l.Num, err)
			return true
		}
		cases = append(cases, benchCase{PositionLine: pl, want: want})
		return limit == 0 || len(cases) < limit
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", file, err)
	}
	return cases, unreadable, nil
}

// benchFile solves the cases of one file, reporting each wrong score on
// stderr. It stops early, marking the result interrupted, when ctx ends.
func benchFile(ctx context.Context, s *solver.Solver, file string, cases []benchCase, opts benchOptions, stderr io.Writer) benchResult {
	res := benchResult{Set: filepath.Base(file), File: file, Warm: opts.warm}
	start, lastProgress := time.Now(), time.Now()
	s.Table().Clear() // each file starts cold, --warm or not
	for _, c := range cases {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		if !opts.warm {
			s.Table().Clear()
		}
		s.ResetNodes()
		t0 := time.Now()
		got := s.Solve(c.Pos)
		res.elapsed += time.Since(t0)
		res.nodes += s.Nodes()
		res.Positions++
		if got != c.want {
			res.Mismatches++
			fmt.Fprintf(stderr, "%s:%d: moves %s: got %d, want %d\n", file, c.Num, c.Moves, got, c.want)
		}
		if opts.progress && time.Since(lastProgress) >= benchProgressEvery {
			lastProgress = time.Now()
			fmt.Fprintf(stderr, "%s: %d/%d positions, %v\n", res.Set, res.Positions, len(cases), time.Since(start).Round(time.Second))
		}
	}
	if res.Positions > 0 {
		n := float64(res.Positions)
		res.MeanNS = float64(res.elapsed.Nanoseconds()) / n
		res.MeanNodes = float64(res.nodes) / n
	}
	if secs := res.elapsed.Seconds(); secs > 0 {
		res.KPosPerSec = float64(res.Positions) / secs / 1000
		res.NodesPerSec = float64(res.nodes) / secs
	}
	return res
}

// printBenchResult writes res as a table row or a JSON line.
func printBenchResult(w io.Writer, res benchResult, asJSON bool) error {
	if asJSON {
		line, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", line)
		return err
	}
	note := ""
	if res.Interrupted {
		note = "  (interrupted)"
	}
	_, err := fmt.Fprintf(w, "%-16s %9d %10d %10s %12.1f %10.2f %10.2f%s\n",
		res.Set, res.Positions, res.Mismatches, formatDuration(time.Duration(res.MeanNS)),
		res.MeanNodes, res.KPosPerSec, res.NodesPerSec/1e6, note)
	return err
}

// formatDuration writes d with three or four significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}
