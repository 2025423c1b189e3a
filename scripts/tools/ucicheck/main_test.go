package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// uciLines are lines of the data set (S-Banna/connect-four connect-4.csv,
// near its end), with each outcome.
var uciLines = []string{
	"xbbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobbloss",
	"xooxxbbbbbbbobbbbbbbbbbbbbbbbbobbbbbxbbbbbdraw",
	"xobbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbboxxoxowin",
	"xoxoxbobbbbbbbbbbbbbbbbbbbbbbbbbbbbboxbbbbloss",
	"x,x,o,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,o,o,x,o,x,b,draw", // the UCI file's own form
}

// TestParseLine: the solver, without a book, agrees with the data set's
// outcome of each line, which checks the reading of cells, the player to
// move and the sign.
func TestParseLine(t *testing.T) {
	s, err := solver.New(solver.Standard, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range uciLines {
		p, outcome, err := parseLine(line)
		if err != nil {
			t.Fatalf("parseLine(%q): %v", line, err)
		}
		if p.Moves() != 8 {
			t.Errorf("%q: %d moves, want 8", line, p.Moves())
		}
		if got := s.Solve(p); solver.Outcome(got) != outcome {
			t.Errorf("%q: solved %d, the data set says %d", line, got, outcome)
		}
	}
}

func TestParseLine_refused(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"xbbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobb", "want 42 cells and an outcome"},
		{"xbbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobblost", "not win, draw or loss"},
		{"xbbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobzloss", "not x, o or b"},
		{"bxbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobbloss", "a stone above a blank in column a"},
		{"xxbbbbbbbbbbooxbbbbbbbbbbbbbbbbbbbbboxxobbloss", "5 x and 4 o"},
		{"xxxxbbobbbbbobbbbbobbbbbobbbbbbbbbbbbbbbbbloss", "four in a row"},
	} {
		if _, _, err := parseLine(tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseLine(%q) = %v, want an error saying %q", tc.line, err, tc.want)
		}
	}
}

// TestRun: positions the book scores rightly agree, one it scores wrongly
// and one it lacks are printed and make run fail.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "book")
	bk, err := book.Open(dir, &book.Options{Create: true, Board: solver.Standard})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := solver.New(solver.Standard, 16<<20)
	for i, line := range uciLines[:4] {
		p, _, _ := parseLine(line)
		v := s.Solve(p)
		if i == 3 {
			v = -v // a wrong entry
		}
		if err := bk.Put(p, book.Value{Score: v, Origin: book.OriginSolved}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "uci.txt")
	if err := os.WriteFile(file, []byte(strings.Join(uciLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(dir, 2, []string{file}, &out)
	t.Log(out.String())
	if err == nil || !strings.Contains(err.Error(), "1 positions disagree, 1 are missing") {
		t.Errorf("run = %v, want 1 disagreeing and 1 missing", err)
	}
	for _, want := range []string{uciLines[3] + ": the book scores it", uciLines[4] + ": not in the book", "5 positions: 3 agree (1 win, 1 draw, 1 loss)", "2 also solved without the book, 0 of them disagree"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestDataSetPositions: the data set's rule makes as many positions as the
// data set has, each once up to its mirror image, each with 8 stones, no
// four and no four to play for either player.
func TestDataSetPositions(t *testing.T) {
	positions := dataSetPositions()
	if len(positions) != uciPositions {
		t.Errorf("%d positions, want %d", len(positions), uciPositions)
	}
	seen := map[uint64]bool{}
	for _, p := range positions {
		if seen[p.CanonicalKey()] || p.Moves() != uciPly || p.LastMoveWon() || p.CanWinNext() || opponentCanWinNext(p) {
			t.Fatalf("%v: a second time (%v), or not a position of the data set", p, seen[p.CanonicalKey()])
		}
		seen[p.CanonicalKey()] = true
	}
}

// TestOpponentCanWinNext: o's three stones in column 1 with the cell above
// empty are a four o could play; with the third elsewhere, not; o's three
// in a row with both ends unplayable, not.
func TestOpponentCanWinNext(t *testing.T) {
	for moves, want := range map[string]bool{"213161": true, "213162": false, "44": false, "4455": false, "445566": false, "2131": false, "21316177": true} {
		p := solver.Standard.NewPosition()
		if err := p.PlayMoves(moves); err != nil {
			t.Fatal(err)
		}
		if got := opponentCanWinNext(p); got != want {
			t.Errorf("%s: %v, want %v", moves, got, want)
		}
	}
}

// TestCompareTally: a tally equal to the data set's passes; another number
// of positions, a missing one or other outcomes fail, saying which.
func TestCompareTally(t *testing.T) {
	good := map[int]int{1: uciWins, -1: uciLosses, 0: uciDraws}
	if err := compareTally(uciPositions, good, 0); err != nil {
		t.Errorf("the data set's own tally: %v", err)
	}
	swapped := map[int]int{1: uciWins - 1, -1: uciLosses, 0: uciDraws + 1}
	for _, tc := range []struct {
		positions, missing int
		tally              map[int]int
		want               string
	}{
		{uciPositions - 1, 0, good, "the rule made 67556 positions"},
		{uciPositions, 1, good, "1 positions are missing"},
		{uciPositions, 0, swapped, "44472 win, 16635 loss, 6450 draw against 44473, 16635, 6449"},
	} {
		if err := compareTally(tc.positions, tc.tally, tc.missing); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compareTally(%d, %v, %d) = %v, want %q", tc.positions, tc.tally, tc.missing, err, tc.want)
		}
	}
}

// TestRunAll: on a book without the data set's positions, every one is
// missing and the check fails.
func TestRunAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "book")
	bk, err := book.Open(dir, &book.Options{Create: true, Board: solver.Standard})
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = runAll(dir, &out)
	if err == nil || !strings.Contains(err.Error(), "67557 positions are missing") || !strings.Contains(out.String(), "67557 positions by the data set's rule") {
		t.Errorf("runAll on an empty book = %v, output:\n%s", err, out.String())
	}
}
