package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/solver"
)

const bookPackLong = `Write a finished book as a packed book: one immutable file holding the
exact score of every position of one job's set, a few bits a position,
read in place (no loading: a lookup reads a few pages of the file). Every
command that reads a book (serve, solve --book, book get, stats, export,
verify, digest) reads a packed book given as --book FILE; those that
write refuse it.

The set is that of "c4book generate --root MOVES --depth D": every
position reachable from the root by legal play with at most D stones, one
per canonical key. --root and --depth default to those of the book's job,
when it has one that is done. The book must hold every position of the
set: one missing is an error naming it, and nothing is written.

The file holds no positions: membership is computed (a position outside
the set is "not in the book", never a score), positions the rules score
(the player to move makes four now, or cannot stop the opponent's four)
cost nothing, and the others' scores are Huffman codes, chosen by the
position's threats, in binary fuse arrays. The header names the board,
root, depth, number of positions and the digest of the set (the digest
"c4book book digest" prints); each 4 KiB block has a checksum, checked the
first time it is read. The layout: docs/format.md, "Packed books".

The file is made in memory (about 10 bytes for each position of the
largest depth whose score is coded, and the file itself), written under a
temporary name, then read back: its every block is checked and its digest
computed from its lookups must be the book's, before it takes its name.
--no-check skips that reading (half the time).`

const bookPackExample = `  c4book book pack --book d12.db d12.c4pack
  c4book book pack --book 7x6.db --depth 12 7x6-d12.c4pack
  c4book book pack --book part.db --root 3344 --depth 12 3344.c4pack`

// newBookPackCommand builds "c4book book pack".
func newBookPackCommand(a *app) *cobra.Command {
	var root string
	var depth int
	var noCheck bool
	cmd := &cobra.Command{
		Use:     "pack [--root MOVES] [--depth D] [--book PATH] [--no-check] FILE",
		Short:   "Write a finished book as a packed book: a few bits a position, read in place",
		Long:    bookPackLong,
		Example: bookPackExample,
		Args:    checkArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("depth") && depth < 0 {
				return newUsageError(cmd, fmt.Errorf("--depth %d: must be 0 or more", depth))
			}
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			p := &bookPack{bk: bk, out: args[0], root: root, depth: depth, rootGiven: cmd.Flags().Changed("root"),
				depthGiven: cmd.Flags().Changed("depth"), check: !noCheck, stdout: a.stdout, stderr: a.stderr}
			err = p.run(cmd)
			if err != nil && cmd.Context().Err() != nil {
				err = errInterrupted
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "pack the positions under the position `MOVES` (default: the job's root)")
	cmd.Flags().IntVar(&depth, "depth", 0, "pack the positions of at most `D` stones (default: the job's depth)")
	cmd.Flags().BoolVar(&noCheck, "no-check", false, "do not read the file back to check it before it takes its name")
	return cmd
}

// bookPack is one run of "c4book book pack".
type bookPack struct {
	bk                    *book.Book
	out                   string
	root                  string
	depth                 int
	rootGiven, depthGiven bool
	check                 bool
	stdout, stderr        io.Writer
}

// run finds the set, packs it into a temporary file, checks the file and
// gives it its name.
func (p *bookPack) run(cmd *cobra.Command) error {
	if err := p.chooseSet(); err != nil {
		return err
	}
	if st, err := os.Stat(p.out); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: give the packed book's file name", p.out)
	}
	if p.root == solver.EmptyMoves {
		p.root = ""
	}
	rootName := solver.FormatMoves(p.root)
	start := time.Now()
	var mu sync.Mutex
	last := start
	opts := &book.DigestOptions{Progress: func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= digestProgressEvery {
			last = now
			fmt.Fprintf(p.stderr, "pack: %s positions read in %s\n", human.Count(n), human.Span(now.Sub(start)))
		}
	}}
	var rep book.PackReport
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var err error
		if rep, err = p.bk.Pack(cmd.Context(), bw, p.root, p.depth, opts); err != nil {
			return p.explain(err)
		}
		return bw.Flush()
	}
	check := func(tmp string) error {
		if !p.check {
			return nil
		}
		fmt.Fprintf(p.stderr, "pack: %s positions packed in %s; reading the file back to check it\n",
			human.Count(rep.Digest.Positions), human.Span(time.Since(start)))
		return checkPacked(cmd, tmp, p.root, p.depth, rep.Digest, opts)
	}
	if err := writeFileAtomicChecked(p.out, 0o644, write, check); err != nil {
		return err
	}
	return p.report(rep, rootName, time.Since(start))
}

// chooseSet sets the root and depth of the set to pack: the flags', or
// the book's one done job's.
func (p *bookPack) chooseSet() error {
	if p.rootGiven && p.depthGiven {
		return nil
	}
	jobs, err := p.bk.Jobs()
	if err != nil {
		return err
	}
	var done []book.Job
	for _, j := range jobs {
		if j.State == book.JobDone && (!p.rootGiven || j.Root == p.root) && (!p.depthGiven || j.Depth == p.depth) {
			done = append(done, j)
		}
	}
	switch len(done) {
	case 1:
		p.root, p.depth = done[0].Root, done[0].Depth
		return nil
	case 0:
		if p.depthGiven {
			return nil // the root given or the empty board
		}
		return fmt.Errorf("book %s has no finished job to pack: give --depth (and --root)", p.bk.Path())
	}
	var names []string
	for _, j := range done {
		names = append(names, fmt.Sprintf("--root %s --depth %d", solver.FormatMoves(j.Root), j.Depth))
	}
	return fmt.Errorf("book %s has %d finished jobs: say which to pack (%s)", p.bk.Path(), len(done), strings.Join(names, "; "))
}

// explain adds to the error of a position the book lacks what to do.
func (p *bookPack) explain(err error) error {
	missing, ok := errors.AsType[*book.MissingError](err)
	if !ok {
		return err
	}
	return fmt.Errorf("book %s is incomplete for root %s and depth %d: %w; a packed book holds every position of its set: finish the job (c4book generate --root %s --depth %d --book %s) and pack again",
		p.bk.Path(), solver.FormatMoves(p.root), p.depth, missing, solver.FormatMoves(p.root), p.depth, p.bk.Path())
}

// checkPacked opens the packed book at path, checks every block of it,
// and computes its digest from its lookups: it must be want.
func checkPacked(cmd *cobra.Command, path, root string, depth int, want book.Digest, opts *book.DigestOptions) error {
	bk, err := book.Open(path, &book.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("check of the packed book: %w", err)
	}
	defer bk.Close()
	if err := bk.Packed().Check(); err != nil {
		return fmt.Errorf("check of the packed book: %w", err)
	}
	got, err := bk.Digest(cmd.Context(), root, depth, opts)
	if err != nil {
		return fmt.Errorf("check of the packed book: %w", err)
	}
	if got != want {
		return fmt.Errorf("check of the packed book: its lookups give the digest %v of %s positions, the book %v of %s: the file is wrong, not written",
			got, human.Count(got.Positions), want, human.Count(want.Positions))
	}
	return nil
}

// report prints what was packed: the file, then a line a level.
func (p *bookPack) report(rep book.PackReport, rootName string, took time.Duration) error {
	n := rep.Digest.Positions
	bits := 0.0
	if n > 0 {
		bits = 8 * float64(rep.Bytes) / float64(n)
	}
	checked := "checked: its lookups give the book's digest"
	if !p.check {
		checked = "not read back (--no-check)"
	}
	w := bufio.NewWriter(p.stdout)
	fmt.Fprintf(w, "packed %s positions of %v, root %s, %d stones and fewer, into %s: %s bytes, %.2f bits a position (%s; %s)\n",
		human.Count(n), p.bk.Board(), rootName, p.depth, p.out, human.Count(rep.Bytes), bits, human.Span(took), checked)
	fmt.Fprintf(w, "digest %v\n", rep.Digest)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stones\tpositions\tby rule\tcoded\tbytes\tbits a position\tscheme\t")
	for _, lv := range rep.Levels {
		lb := 0.0
		if lv.Positions > 0 {
			lb = 8 * float64(lv.Bytes) / float64(lv.Positions)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f\t%d\t\n", lv.Stones, human.Count(lv.Positions), human.Count(lv.WinNow+lv.LoseNext),
			human.Count(lv.Stored), human.Count(lv.Bytes), lb, lv.Scheme)
	}
	tw.Flush()
	return w.Flush()
}
