// Package bench measures the solver on reference sets of positions, files
// of "moves score" lines such as Pascal Pons' test sets: it solves each
// position, checks its score, and times the solves alone. As in Pons'
// benchmark the transposition table is cleared before each position,
// unless Options.Warm keeps it. c4book bench runs it.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/solver"
)

// Case is a position of a set and its expected score.
type Case struct {
	bookfile.PositionLine
	Want int
}

// ReadFile reads the first limit positions of file (all if limit is 0),
// reporting each unreadable line on errs and counting them.
func ReadFile(b *solver.Board, file string, limit int, errs io.Writer) (cases []Case, unreadable int, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	err = bookfile.ScanLines(f, func(l bookfile.Line) bool {
		if l.Ignorable() {
			return true
		}
		pl, err := bookfile.ParsePositionLine(b, l)
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
			fmt.Fprintf(errs, "%s:%d: %v\n", file, l.Num, err)
			return true
		}
		cases = append(cases, Case{PositionLine: pl, Want: want})
		return limit == 0 || len(cases) < limit
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", file, err)
	}
	return cases, unreadable, nil
}

// progressEvery is how often Solve shows its progress.
const progressEvery = 5 * time.Second

// Options says how Solve solves a set.
type Options struct {
	// Warm keeps the transposition table from one position to the next;
	// by default it is cleared before each.
	Warm bool
	// Progress, if not nil, receives a line every five seconds: the
	// positions solved so far.
	Progress io.Writer
}

// Result is what Solve measured on one file. The JSON field names are
// part of c4book bench's interface.
type Result struct {
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

// Solve solves the cases of file with s, timing each solve alone, and
// reports each wrong score on errs. The table is cleared first, warm or
// not. It stops early, marking the result interrupted, when ctx ends.
func Solve(ctx context.Context, s *solver.Solver, file string, cases []Case, opts Options, errs io.Writer) Result {
	res := Result{Set: filepath.Base(file), File: file, Warm: opts.Warm}
	start, lastProgress := time.Now(), time.Now()
	s.Table().Clear() // each file starts cold, warm or not
	for _, c := range cases {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		if !opts.Warm {
			s.Table().Clear()
		}
		s.ResetNodes()
		t0 := time.Now()
		got := s.Solve(c.Pos)
		res.elapsed += time.Since(t0)
		res.nodes += s.Nodes()
		res.Positions++
		if got != c.Want {
			res.Mismatches++
			fmt.Fprintf(errs, "%s:%d: moves %s: got %d, want %d\n", file, c.Num, c.Moves, got, c.Want)
		}
		if opts.Progress != nil && time.Since(lastProgress) >= progressEvery {
			lastProgress = time.Now()
			fmt.Fprintf(opts.Progress, "%s: %d/%d positions, %v\n", res.Set, res.Positions, len(cases), time.Since(start).Round(time.Second))
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
