// Command lookuplatency measures the time of one lookup in a book, Pebble
// or packed: it draws positions of the book's set (random play from the
// root of its job, to a random number of stones up to its depth), looks
// each up once, timing each, in a first pass and again in a second, and
// prints the percentiles of each pass, and of the first pass's first
// 1,000 lookups. Run after dropping the page cache (as root: sync; echo 3
// > /proc/sys/vm/drop_caches), the first pass is the cold one, its first
// lookups most of all: each reads what it needs from the disk; the second
// pass is warm. Lookups go through a book.Reader, as a server's and a
// solver's oracle do.
//
//	go run ./scripts/tools/lookuplatency -n 100000 books/7x6-d12.c4pack
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

func main() {
	n := flag.Int("n", 100000, "`N` positions looked up in each pass")
	seed := flag.Uint64("seed", 1, "`SEED` of the positions drawn")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: lookuplatency [-n N] [-seed SEED] BOOK")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "lookuplatency:", err)
		os.Exit(1)
	}
}

// run measures the book at path.
func run(w io.Writer, path string, n int, seed uint64) error {
	bk, err := book.Open(path, &book.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer bk.Close()
	jobs, err := bk.Jobs()
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return fmt.Errorf("book %s records no job: no set to draw positions from", path)
	}
	job := jobs[0]
	positions, err := draw(bk.Board(), job.Root, job.Depth, n, seed)
	if err != nil {
		return err
	}
	rd, err := bk.NewReader()
	if err != nil {
		return err
	}
	defer rd.Close()
	fmt.Fprintf(w, "book %s: %d positions of the set of root %s to %d stones\n", path, n, solver.FormatMoves(job.Root), job.Depth)
	for _, pass := range []string{"first", "second"} {
		ls := make([]time.Duration, len(positions))
		start := time.Now()
		for i := range positions {
			p := &positions[i]
			t := time.Now()
			_, ok, err := rd.GetEntry(p.Moves(), p.CanonicalKey())
			ls[i] = time.Since(t)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("position %v of the set is not in the book", p)
			}
		}
		if pass == "first" && len(ls) > firstLookups {
			report(w, fmt.Sprintf("first %d of the first", firstLookups), slices.Clone(ls[:firstLookups]), 0)
		}
		report(w, pass, ls, time.Since(start))
	}
	return nil
}

// draw returns n positions reached by random play from root, each to a
// random number of stones up to depth, none whose last move made four.
func draw(b *solver.Board, root string, depth, n int, seed uint64) ([]solver.Position, error) {
	r, err := b.Parse(root)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x100c))
	positions := make([]solver.Position, 0, n)
	var cols []int
	for len(positions) < n {
		p := r
		for range rng.IntN(depth - r.Moves() + 1) {
			cols = cols[:0]
			for col, c := range p.Children() {
				if !c.LastMoveWon() {
					cols = append(cols, col)
				}
			}
			if len(cols) == 0 {
				break
			}
			p.Play(cols[rng.IntN(len(cols))])
		}
		positions = append(positions, p)
	}
	return positions, nil
}

// firstLookups is how many of the first pass's first lookups are
// reported apart: the coldest.
const firstLookups = 1000

// report prints the percentiles of one pass's latencies (sorting them),
// and the pass's wall time if not 0.
func report(w io.Writer, pass string, ls []time.Duration, wall time.Duration) {
	slices.Sort(ls)
	q := func(f float64) time.Duration { return ls[min(len(ls)-1, int(f*float64(len(ls))))] }
	took := ""
	if wall > 0 {
		took = fmt.Sprintf(" in %v", wall.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "%s pass: %d lookups%s: p50 %v, p90 %v, p99 %v, p99.9 %v, max %v\n",
		pass, len(ls), took, q(0.5), q(0.9), q(0.99), q(0.999), ls[len(ls)-1])
}
