package main

import (
	"fmt"
	"io"

	"github.com/c4book/c4book/solver"
)

// The whole data set, without its file. Its rule is exact: every position
// of 8 plies, a position and its mirror image once, in which nobody has
// four, the player who just moved (o) has no four to play next (x's move
// is not forced) and x has none either. ../shared/testdata/counts-7x6.txt
// counts 67,557 such positions, as many as the data set's lines, and the
// data set's description gives their outcomes for x: 44,473 wins, 16,635
// losses and 6,449 draws. With --all, ucicheck makes the positions by the
// rule and tallies the book's outcomes: a wrong entry shows unless another
// wrong entry cancels it exactly, in the other direction.

// uciPositions, uciWins, uciLosses and uciDraws are the data set's size
// and its outcomes' counts, from its description (connect-4.names).
const (
	uciPositions = 67_557
	uciWins      = 44_473
	uciLosses    = 16_635
	uciDraws     = 6_449
)

// uciPly is the number of stones of the data set's positions.
const uciPly = 8

// dataSetPositions returns the positions of the data set's rule, made by
// playing every game to 8 plies, each position once up to its mirror
// image.
func dataSetPositions() []solver.Position {
	b := solver.Standard
	var out []solver.Position
	level := []solver.Position{b.NewPosition()}
	for ply := 0; ply < uciPly; ply++ {
		seen := map[uint64]bool{}
		var next []solver.Position
		for _, p := range level {
			for _, c := range p.Children() {
				k := c.CanonicalKey()
				if seen[k] || c.LastMoveWon() {
					continue
				}
				seen[k] = true
				next = append(next, c)
			}
		}
		level = next
	}
	for _, p := range level {
		if !p.CanWinNext() && !opponentCanWinNext(p) {
			out = append(out, p)
		}
	}
	return out
}

// opponentCanWinNext reports whether the player who just moved in p could
// make four with a stone in one of p's playable cells. The position with
// the colours swapped, the opponent to move, is made from p's key,
// current + mask (Position.Key), with mask from the columns' heights.
// p must hold an even number of stones, as the data set's do: the
// swapped position is a legal one only then.
func opponentCanWinNext(p solver.Position) bool {
	b := p.Board()
	moves, ok := p.MoveString()
	if !ok {
		panic(fmt.Sprintf("no moves reach %v", p))
	}
	stride := uint(b.Height() + 1)
	var mask uint64
	for _, c := range moves {
		mask |= mask + 1<<(uint(c-'1')*stride) // the column's next cell
	}
	current := p.Key() - mask
	swapped, err := b.PositionFromKey((mask ^ current) + mask)
	if err != nil {
		panic(fmt.Sprintf("the colours of %v swapped: %v", p, err))
	}
	return swapped.CanWinNext()
}

// runAll checks the book at dir on every position of the data set's rule
// and compares the tally of its outcomes with the data set's.
func runAll(dir string, out io.Writer) error {
	bk, err := openBook(dir)
	if err != nil {
		return err
	}
	defer bk.Close()
	positions := dataSetPositions()
	byOutcome := map[int]int{}
	missing := 0
	for _, p := range positions {
		v, ok, err := bk.Get(p)
		switch {
		case err != nil:
			return err
		case !ok:
			missing++
			if missing <= 10 {
				s, _ := p.MoveString()
				fmt.Fprintf(out, "%s: not in the book\n", s)
			}
		default:
			byOutcome[solver.Outcome(v.Score)]++
		}
	}
	fmt.Fprintf(out, "%d positions by the data set's rule (the data set: %d); the book: %d win, %d loss, %d draw (the data set: %d, %d, %d); %d missing\n",
		len(positions), uciPositions, byOutcome[1], byOutcome[-1], byOutcome[0], uciWins, uciLosses, uciDraws, missing)
	return compareTally(len(positions), byOutcome, missing)
}

// compareTally says how the positions made by the rule and the book's
// outcomes of them differ from the data set, nil if they do not.
func compareTally(positions int, byOutcome map[int]int, missing int) error {
	switch {
	case positions != uciPositions:
		return fmt.Errorf("the rule made %d positions, the data set has %d", positions, uciPositions)
	case missing > 0:
		return fmt.Errorf("%d positions are missing from the book", missing)
	case byOutcome[1] != uciWins || byOutcome[-1] != uciLosses || byOutcome[0] != uciDraws:
		return fmt.Errorf("the book's outcomes differ from the data set's: %d win, %d loss, %d draw against %d, %d, %d",
			byOutcome[1], byOutcome[-1], byOutcome[0], uciWins, uciLosses, uciDraws)
	}
	return nil
}
