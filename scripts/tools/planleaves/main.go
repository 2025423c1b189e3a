// Command planleaves solves leaves of a job's plan (coordinator.MakePlan's
// directory, BOOK/plans/ID) outside the job, one thread, to see what the
// job's leaves cost and what the worker's table does for them:
//
//   - with -windows W (the default), it cuts the job's order into W
//     windows and solves -sample random leaves of each with the table
//     cleared before each (Pons' protocol): the mean nodes a leaf, with
//     its standard error, and the mean time; where the job's cost lies
//     along its order, and so what its leaves not yet solved will cost
//     against those solved;
//   - with -count N, it solves the N leaves of the order from -from, in
//     order, on one table kept warm from leaf to leaf (as a worker's
//     thread solves a task's), once for each size of -tt-size: nodes and
//     time a leaf by table size, back to back. With -threads T, T threads
//     share the table, each taking the next -task leaves in turn, as a
//     worker of T threads takes a lane's tasks: time a leaf is then wall
//     time, the threads together.
//
// The plan may be one a job is running from: it is only read.
//
//	go run ./scripts/tools/planleaves -windows 20 -sample 300 DIR/book.db/plans/7x6-d16
//	go run ./scripts/tools/planleaves -from 69736000 -count 4000 -tt-size 16MiB,64MiB,2GiB DIR/book.db/plans/7x6-d16
//	go run ./scripts/tools/planleaves -from 82000000 -count 8192 -threads 2 -tt-size 16MiB DIR/book.db/plans/7x6-d16
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

func main() {
	width := flag.Int("width", 7, "`W`, the board's columns")
	height := flag.Int("height", 6, "`H`, the board's rows")
	windows := flag.Int("windows", 20, "`W` windows of the order, -sample leaves of each solved cold")
	sample := flag.Int("sample", 300, "`N` leaves a window")
	seed := flag.Uint64("seed", 1, "`SEED` of the leaves drawn")
	from := flag.Int64("from", 0, "the first leaf, by its index in the order, of -count")
	count := flag.Int64("count", 0, "`N` leaves of the order from -from, solved in order on a warm table (instead of -windows)")
	sizes := flag.String("tt-size", "64MiB", "`SIZES`, comma-separated: the table of each solve (-count: one run each)")
	threads := flag.Int("threads", 1, "`T` threads sharing the table of -count, as a worker's threads do")
	task := flag.Int64("task", 256, "`N` leaves a thread takes at a time with -threads (a worker's task)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: planleaves [-windows W] [-sample N] [-seed S] [-from I -count N [-threads T] [-task N]] [-tt-size SIZES] PLANDIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *windows < 1 || *sample < 2 || *count < 0 || *from < 0 || *threads < 1 || *task < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *width, *height, *windows, *sample, *seed, *from, *count, *threads, *task, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "planleaves:", err)
		os.Exit(1)
	}
}

// plan is the part of a job's plan this reads: the leaves, and their
// order.
type plan struct {
	board  *solver.Board
	leaves *keyfile.File
	order  *keyfile.File
}

// leaf returns the i-th leaf of the order.
func (p *plan) leaf(i int64) (solver.Position, error) {
	idx, err := p.order.Keys(nil, i, i+1)
	if err != nil {
		return solver.Position{}, err
	}
	key, err := p.leaves.Keys(nil, int64(idx[0]), int64(idx[0])+1)
	if err != nil {
		return solver.Position{}, err
	}
	return p.board.PositionFromKey(key[0])
}

func run(w io.Writer, dir string, width, height, windows, sample int, seed uint64, from, count int64, threads int, task int64, sizes string) error {
	b, err := solver.NewBoard(width, height)
	if err != nil {
		return err
	}
	var tables []int64
	for s := range strings.SplitSeq(sizes, ",") {
		size, err := config.ParseSize(s)
		if err != nil {
			return fmt.Errorf("-tt-size: %w", err)
		}
		tables = append(tables, int64(size))
	}
	leaves, err := keyfile.Open(filepath.Join(dir, "leaves"))
	if err != nil {
		return err
	}
	defer leaves.Close()
	order, err := keyfile.OpenList(filepath.Join(dir, "order"))
	if err != nil {
		return fmt.Errorf("%w (a plan made before its order: no order to follow)", err)
	}
	defer order.Close()
	p := &plan{board: b, leaves: leaves, order: order}
	n := order.Len()
	if count > 0 {
		if from+count > n {
			return fmt.Errorf("-from %d -count %d: the order has %d leaves", from, count, n)
		}
		return warm(w, p, from, count, threads, task, tables)
	}
	return profile(w, p, n, windows, sample, seed, tables[0])
}

// profile solves sample random leaves of each of windows windows of the
// order, cold, and prints each window's mean nodes and time a leaf.
func profile(w io.Writer, p *plan, n int64, windows, sample int, seed uint64, table int64) error {
	s, err := solver.New(p.board, table)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	fmt.Fprintf(w, "%d leaves in the order; %d random leaves of each window, each solved on a cleared table of %d MiB\n", n, sample, table>>20)
	for i := range int64(windows) {
		lo, hi := n*i/int64(windows), n*(i+1)/int64(windows)
		var sum, sq float64
		var took time.Duration
		for range sample {
			pos, err := p.leaf(lo + rng.Int64N(hi-lo))
			if err != nil {
				return err
			}
			s.Table().Clear()
			s.ResetNodes()
			start := time.Now()
			s.Solve(pos)
			took += time.Since(start)
			x := float64(s.Nodes())
			sum, sq = sum+x, sq+x*x
		}
		k := float64(sample)
		mean := sum / k
		se := math.Sqrt(max(0, sq/k-mean*mean) / (k - 1))
		fmt.Fprintf(w, "[%d, %d): %.0f ± %.0f nodes a leaf, %.2f ms\n", lo, hi, mean, se, took.Seconds()*1000/k)
	}
	return nil
}

// warm solves count leaves of the order from from, in order, on one table
// of each size, and prints nodes and time a leaf. With threads > 1, that
// many solvers share the table, each taking the next task leaves in turn.
func warm(w io.Writer, p *plan, from, count int64, threads int, task int64, tables []int64) error {
	positions := make([]solver.Position, count)
	for i := range positions {
		var err error
		if positions[i], err = p.leaf(from + int64(i)); err != nil {
			return err
		}
	}
	for _, table := range tables {
		t, err := solver.NewTable(p.board, table)
		if err != nil {
			return err
		}
		t.Clear() // every page touched before the clock starts
		var (
			next  atomic.Int64 // the first leaf of the next task
			nodes atomic.Uint64
			wg    sync.WaitGroup
		)
		start := time.Now()
		for range threads {
			wg.Go(func() {
				s := solver.NewShared(t)
				for {
					lo := next.Add(task) - task
					if lo >= count {
						break
					}
					guess := 0 // as a worker's thread guesses a task's (worker/solve.go)
					for _, pos := range positions[lo:min(lo+task, count)] {
						guess = solver.Outcome(s.SolveNear(pos, guess))
					}
				}
				nodes.Add(s.Nodes())
			})
		}
		wg.Wait()
		took := time.Since(start)
		n := float64(nodes.Load())
		fmt.Fprintf(w, "table %d MiB, %d thread(s): %d leaves from %d, in order: %.0f nodes a leaf, %.3f ms a leaf (%.2f M nodes/s)\n",
			table>>20, threads, count, from, n/float64(count), took.Seconds()*1000/float64(count), n/took.Seconds()/1e6)
	}
	return nil
}
