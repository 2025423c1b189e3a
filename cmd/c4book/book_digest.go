package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

const bookDigestLong = `Print the SHA-256 digest of the positions under a root, so that a book,
or a part of one rebuilt elsewhere, can be checked against a published
digest, however and wherever it was built.

The digest covers every position reachable from the root (--root MOVES,
default the empty board) by legal play with at most --depth stones
(default: the book's deepest positions), one per canonical key (a
position and its mirror image share one), without the positions whose
last move made four: the positions "c4book generate --root MOVES --depth
D" writes. It hashes each one's canonical key and exact score, in the
book's order (by stones, then key), and nothing else: not who solved a
score or whether it was derived. The byte format: docs/format.md,
"Digests". Entries of the book outside that set change nothing.

It prints the digest, 64 lower-case hexadecimal digits, and on standard
error the number of positions hashed.

--by-root N prints instead a line "MOVES DIGEST" for the root (its moves,
"-" for the empty board), then one for each sequence of N moves from the
root that can be played and leaves a game not over, columns 1..width in
lexicographic order: the digest "--root MOVES" would print, MOVES being
the root's moves followed by the sequence's. Sequences reaching the same
position, or mirror images, have the same digest, computed once: in
groups of up to 64 positions, one walk of a group's sets for all its
digests, --concurrency walks at once (default: one per CPU). This is
the format of the published digests, docs/digests/d12.txt and d14.txt
(--by-root 4).

A position of the set that the book does not hold is an error naming
the first one in the digest's order: the book is incomplete for that
root and depth, and the job that builds it completes it.

Positions are enumerated depth by depth, each from the one before, sorted
with at most 16 MiB of keys in memory and the rest spilled to the
temporary directory ($TMPDIR), and looked up in the book in key order.`

const bookDigestExample = `  c4book book digest --book 7x6.db
  c4book book digest --root 3344 --depth 12 --book part.db
  c4book book digest --depth 12 --by-root 4 --book 7x6.db > d12.txt`

// digestProgressEvery is how often a digest reports its progress on
// standard error.
const digestProgressEvery = 10 * time.Second

// newBookDigestCommand builds "c4book book digest".
func newBookDigestCommand(a *app) *cobra.Command {
	var root string
	var depth, byRoot, concurrency int
	cmd := &cobra.Command{
		Use:     "digest [--root MOVES] [--depth D] [--by-root N] [--book PATH]",
		Short:   "Print the SHA-256 digest of the positions under a root, to check a book against a published one",
		Long:    bookDigestLong,
		Example: bookDigestExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			depthGiven := cmd.Flags().Changed("depth")
			switch {
			case depthGiven && depth < 0:
				return newUsageError(cmd, fmt.Errorf("--depth %d: must be 0 or more", depth))
			case byRoot < 0:
				return newUsageError(cmd, fmt.Errorf("--by-root %d: must be 1 or more (0: the root's digest alone)", byRoot))
			case concurrency < 0:
				return newUsageError(cmd, fmt.Errorf("--concurrency %d: must be 0 (one per CPU) or more", concurrency))
			}
			if concurrency == 0 {
				concurrency = runtime.NumCPU()
			}
			cfg, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			d := &bookDigest{bk: bk, cfg: cfg, root: root, depth: depth, depthGiven: depthGiven, byRoot: byRoot,
				threads: concurrency, stdout: a.stdout, stderr: a.stderr}
			err = d.run(cmd)
			if err != nil && cmd.Context().Err() != nil {
				err = errInterrupted
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "hash the positions under the position `MOVES` (default: the empty board)")
	cmd.Flags().IntVar(&depth, "depth", 0, "hash the positions of at most `D` stones (default: the book's deepest)")
	cmd.Flags().IntVar(&byRoot, "by-root", 0, "print the digest of each sequence of `N` moves from the root, after the root's")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "with --by-root, walk `N` groups of digests at once (default: one per CPU)")
	return cmd
}

// bookDigest is one run of "c4book book digest".
type bookDigest struct {
	bk             *book.Book
	cfg            config.Config
	root           string
	depth          int
	depthGiven     bool
	byRoot         int
	threads        int
	stdout, stderr io.Writer
}

// run checks the root and the depth against the book, computes the
// digests and prints them.
func (d *bookDigest) run(cmd *cobra.Command) error {
	board := d.bk.Board()
	root, err := coordinator.ParseRoot(board, d.root)
	if err != nil {
		return fmt.Errorf("--root %s: %w", solver.FormatMoves(d.root), err)
	}
	_, deepest, ok, err := d.bk.DepthRange()
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("book %s holds no position: nothing to digest", d.bk.Path())
	case !d.depthGiven:
		d.depth = deepest
		if d.depth < root.Moves() {
			return fmt.Errorf("book %s holds positions of at most %d stones, fewer than the root's %d: nothing under it to digest", d.bk.Path(), deepest, root.Moves())
		}
	case d.depth < root.Moves():
		return fmt.Errorf("--depth %d: fewer stones than the root's %d", d.depth, root.Moves())
	case d.depth > deepest:
		return fmt.Errorf("--depth %d: book %s holds positions of at most %d stones", d.depth, d.bk.Path(), deepest)
	}
	if d.byRoot > 0 && root.Moves()+d.byRoot > d.depth {
		return fmt.Errorf("--by-root %d: the root has %d stones and --depth is %d: at most %d", d.byRoot, root.Moves(), d.depth, d.depth-root.Moves())
	}

	start := time.Now()
	var mu sync.Mutex
	last := start
	opts := &book.DigestOptions{Threads: d.threads, Progress: func(hashed int64) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= digestProgressEvery {
			last = now
			fmt.Fprintf(d.stderr, "digest: %s positions hashed in %s\n", human.Count(hashed), human.Span(now.Sub(start)))
		}
	}}
	rootMoves := solver.FormatMoves(d.root)
	if d.byRoot == 0 {
		dg, err := d.bk.Digest(cmd.Context(), d.root, d.depth, opts)
		if err != nil {
			return d.explain(err)
		}
		fmt.Fprintf(d.stderr, "%s positions hashed: root %s, %d to %d stones (%s)\n",
			human.Count(dg.Positions), rootMoves, root.Moves(), d.depth, human.Span(time.Since(start)))
		_, err = fmt.Fprintln(d.stdout, dg)
		return err
	}
	whole, seqs, err := d.bk.DigestSequences(cmd.Context(), d.root, d.depth, d.byRoot, opts)
	if err != nil {
		return d.explain(err)
	}
	w := bufio.NewWriter(d.stdout)
	fmt.Fprintf(w, "%s %s\n", rootMoves, whole)
	distinct := map[uint64]bool{} // the canonical keys the sequences reach
	var under int64               // positions hashed under them, each once
	for _, s := range seqs {
		fmt.Fprintf(w, "%s %s\n", s.Moves, s.Digest)
		if p, err := board.Parse(s.Moves); err == nil && !distinct[p.CanonicalKey()] {
			distinct[p.CanonicalKey()] = true
			under += s.Positions
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(d.stderr, "%s positions hashed: root %s, %d to %d stones; %s sequences of %d moves reaching %s positions, %s positions hashed under them (%s)\n",
		human.Count(whole.Positions), rootMoves, root.Moves(), d.depth, human.Count(len(seqs)), d.byRoot,
		human.Count(len(distinct)), human.Count(under), human.Span(time.Since(start)))
	return nil
}

// explain adds to the error of a position the book lacks what it means
// and what to do.
func (d *bookDigest) explain(err error) error {
	missing, ok := errors.AsType[*book.MissingError](err)
	if !ok {
		return err
	}
	var job strings.Builder
	fmt.Fprintf(&job, "c4book generate")
	if b := d.bk.Board(); b.Width() != d.cfg.Board.Width || b.Height() != d.cfg.Board.Height {
		fmt.Fprintf(&job, " --width %d --height %d", b.Width(), b.Height())
	}
	if d.root != "" && d.root != solver.EmptyMoves {
		fmt.Fprintf(&job, " --root %s", d.root)
	}
	fmt.Fprintf(&job, " --depth %d --book %s", d.depth, d.bk.Path())
	return fmt.Errorf("book %s is incomplete for root %s and depth %d: %w, the first missing in the digest's order; "+
		"run the job that builds it (%s) and digest again", d.bk.Path(), solver.FormatMoves(d.root), d.depth, missing, job.String())
}
