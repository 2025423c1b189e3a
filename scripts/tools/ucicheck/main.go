// Command ucicheck compares a book's 8-stone entries with John Tromp's
// connect-4 data set (UCI Machine Learning Repository; also
// EpistasisLab/pmlb datasets/connect_4): every legal 8-ply position of the
// standard board in which nobody has won and the next move is not forced,
// with the outcome for the first player under perfect play. It is an
// independent source: a different program, decades older. It is a check
// tool, never part of a deployment.
//
//	ucicheck --book DIR [--solve N] FILE...
//	ucicheck --book DIR --all
//
// Each line of a FILE is one position: 42 cells, each x (first player), o
// or b (blank), separated by commas or not, column by column from a1 (the
// bottom of the leftmost column) up to a6, then b1 ... g6, then the
// outcome for x: win, loss or draw. After 8 plies x is to move, so the
// book's score for the position has the outcome's sign.
//
// With --solve N, the first N positions are also solved by the solver with
// no book, a check of this program's reading of the file that does not
// depend on the book. It prints the counts, and every disagreement; it
// exits with 1 if any position disagrees or is missing from the book.
//
// With --all it needs no file: it makes the data set's 67,557 positions by
// its rule and compares the tally of the book's outcomes of them with the
// data set's published counts (all.go); it exits with 1 if the rule makes
// another number of positions, one is missing or the tally differs.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

func main() {
	bookDir := flag.String("book", "", "the book to check (read-only)")
	solve := flag.Int("solve", 0, "also solve the first `N` positions with the solver, without the book")
	all := flag.Bool("all", false, "make the data set's positions by its rule, and compare the tally of the book's outcomes with the data set's (no FILE)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ucicheck --book DIR [--solve N] FILE...\n       ucicheck --book DIR --all")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *bookDir == "" || (flag.NArg() == 0) != *all {
		flag.Usage()
		os.Exit(2)
	}
	check := func() error { return run(*bookDir, *solve, flag.Args(), os.Stdout) }
	if *all {
		check = func() error { return runAll(*bookDir, os.Stdout) }
	}
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, "ucicheck:", err)
		os.Exit(1)
	}
}

// run checks the positions of files against the book at dir, printing to
// out. Its error says how many disagree or are missing.
func run(dir string, solve int, files []string, out io.Writer) error {
	bk, err := openBook(dir)
	if err != nil {
		return err
	}
	defer bk.Close()
	s, err := solver.New(solver.Standard, solver.DefaultTableBytes)
	if err != nil {
		return err
	}
	c := counts{byOutcome: map[int]int{}}
	for _, name := range files {
		if err := checkFile(name, bk, s, solve, &c, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "%d positions: %d agree (%d win, %d draw, %d loss), %d disagree, %d missing from the book; %d also solved without the book, %d of them disagree\n",
		c.lines, c.agree, c.byOutcome[1], c.byOutcome[0], c.byOutcome[-1], c.disagree, c.missing, c.solved, c.solvedWrong)
	if c.disagree+c.missing+c.solvedWrong > 0 {
		return fmt.Errorf("%d positions disagree, %d are missing, %d solved disagree", c.disagree, c.missing, c.solvedWrong)
	}
	return nil
}

// openBook opens the book at dir read-only, refusing one of another board
// than the data set's.
func openBook(dir string) (*book.Book, error) {
	bk, err := book.Open(dir, &book.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if !bk.Board().Equal(solver.Standard) {
		bk.Close()
		return nil, fmt.Errorf("book %s is of board %v; the data set is of 7x6", dir, bk.Board())
	}
	return bk, nil
}

// counts are the tallies of a check.
type counts struct {
	lines, agree, disagree, missing int
	byOutcome                       map[int]int // agreeing positions by outcome
	solved, solvedWrong             int
}

// checkFile checks the positions of one file.
func checkFile(name string, bk *book.Book, s *solver.Solver, solve int, c *counts, out io.Writer) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		p, outcome, err := parseLine(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		c.lines++
		v, ok, err := bk.Get(p)
		switch {
		case err != nil:
			return fmt.Errorf("%s:%d: %w", name, n, err)
		case !ok:
			c.missing++
			fmt.Fprintf(out, "%s:%d: %s: not in the book\n", name, n, line)
		case solver.Outcome(v.Score) != outcome:
			c.disagree++
			fmt.Fprintf(out, "%s:%d: %s: the book scores it %d\n", name, n, line, v.Score)
		default:
			c.agree++
			c.byOutcome[outcome]++
		}
		if c.solved < solve {
			c.solved++
			if got := s.Solve(p); solver.Outcome(got) != outcome {
				c.solvedWrong++
				fmt.Fprintf(out, "%s:%d: %s: the solver scores it %d\n", name, n, line, got)
			}
		}
	}
	return sc.Err()
}

// outcomes maps the data set's words to the sign of the score for x.
var outcomes = map[string]int{"win": 1, "draw": 0, "loss": -1}

// parseLine reads one line of the data set: the position, with x to move,
// and the outcome for x (1, 0, -1). It refuses a line that is not 42
// cells and an outcome, a stone above a blank, counts of stones other
// than 4 and 4, and a position where someone has won.
func parseLine(line string) (solver.Position, int, error) {
	line = strings.ReplaceAll(line, ",", "")
	const cells = 42
	if len(line) <= cells {
		return solver.Position{}, 0, fmt.Errorf("%q: want 42 cells and an outcome", line)
	}
	outcome, ok := outcomes[line[cells:]]
	if !ok {
		return solver.Position{}, 0, fmt.Errorf("%q: outcome %q is not win, draw or loss", line, line[cells:])
	}
	b := solver.Standard
	stride := uint(b.Height() + 1)
	var x, mask uint64
	var nx, no int
	for i, cell := range line[:cells] {
		col, row := i/b.Height(), i%b.Height()
		bit := uint64(1) << (uint(col)*stride + uint(row))
		switch cell {
		case 'x':
			x |= bit
			nx++
		case 'o':
			no++
		case 'b':
			continue
		default:
			return solver.Position{}, 0, fmt.Errorf("%q: cell %d is %q, not x, o or b", line, i+1, cell)
		}
		if row > 0 && mask&(bit>>1) == 0 {
			return solver.Position{}, 0, fmt.Errorf("%q: a stone above a blank in column %c", line, 'a'+col)
		}
		mask |= bit
	}
	if nx != 4 || no != 4 {
		return solver.Position{}, 0, fmt.Errorf("%q: %d x and %d o, not the 4 and 4 of 8 plies", line, nx, no)
	}
	// x moves next: the key is x's stones plus the mask (Position.Key).
	// LastMoveWon looks at the stones of the player not to move: o's in
	// p, x's in the position with the colours swapped.
	p, err := b.PositionFromKey(x + mask)
	if err != nil {
		return solver.Position{}, 0, fmt.Errorf("%q: %w", line, err)
	}
	swapped, err := b.PositionFromKey((mask ^ x) + mask)
	if err != nil {
		return solver.Position{}, 0, fmt.Errorf("%q: %w", line, err)
	}
	if p.LastMoveWon() || swapped.LastMoveWon() {
		return solver.Position{}, 0, fmt.Errorf("%q: a player has four in a row already", line)
	}
	return p, outcome, nil
}
