package book

import (
	"errors"
	"slices"
	"testing"

	"github.com/c4book/c4book/solver"
)

func TestBook_BestMoves(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	entries := solvedEntries(t, board5x4, 5)
	putAll(t, bk, entries)
	s, err := solver.New(board5x4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("agrees with Analyze", func(t *testing.T) {
		for _, e := range entries {
			p, err := board5x4.PositionFromKey(e.Key)
			if err != nil {
				t.Fatal(err)
			}
			scores, ok := s.Analyze(p)
			var want []int
			best := -1 << 10
			for col := range scores {
				// BestMoves numbers columns as move strings do.
				if ok[col] && scores[col] > best {
					best, want = scores[col], []int{col + 1}
				} else if ok[col] && scores[col] == best {
					want = append(want, col+1)
				}
			}
			moves, err := bk.MoveScores(p, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range moves {
				if !ok[m.Col] || scores[m.Col] != m.Score {
					t.Fatalf("%v: column %d scores %d from %v, Analyze says %d\n%v", e, m.Col+1, m.Score, m.From, scores[m.Col], p)
				}
			}
			cols, score, err := bk.BestMoves(p, s)
			if err != nil || score != best || !slices.Equal(cols, want) || score != e.Score {
				t.Fatalf("%v: BestMoves = %v, %d, %v; want %v, %d\n%v", e, cols, score, err, want, best, p)
			}
		}
	})
	t.Run("sources", func(t *testing.T) {
		cases := []struct {
			moves string
			from  func(col int) Source
		}{
			// Depth 4: the children are in the book.
			{"1234", func(int) Source { return FromBook }},
			// Depth 6: column 1 makes four, the other children are
			// deeper than the book.
			{"121213", func(col int) Source { return map[bool]Source{true: FromRule, false: FromSolver}[col == 0] }},
		}
		for _, c := range cases {
			moves, err := bk.MoveScores(mustParse(t, board5x4, c.moves), s)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range moves {
				if want := c.from(m.Col); m.From != want {
					t.Errorf("%s: column %d: from %v, want %v", c.moves, m.Col+1, m.From, want)
				}
			}
		}
	})
	t.Run("without solver", func(t *testing.T) {
		if _, _, err := bk.BestMoves(mustParse(t, board5x4, "1234"), nil); err != nil {
			t.Errorf("BestMoves(depth 4) without solver: %v", err)
		}
		if _, _, err := bk.BestMoves(mustParse(t, board5x4, "12345"), nil); !errors.Is(err, ErrNotInBook) {
			t.Errorf("BestMoves(depth 5) without solver = %v, want ErrNotInBook", err)
		}
	})
	t.Run("game over", func(t *testing.T) {
		if _, _, err := bk.BestMoves(mustParse(t, board5x4, "1212121"), s); err == nil {
			t.Error("BestMoves of a won game succeeded")
		}
	})
}

func TestBook_MoveScore(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	putAll(t, bk, solvedEntries(t, board5x4, 4))
	s, err := solver.New(board5x4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r, err := bk.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Run("agrees with MoveScores", func(t *testing.T) {
		for _, moves := range []string{"", "123", "1234", "1213"} {
			p := mustParse(t, board5x4, moves)
			all, err := bk.MoveScores(p, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range all {
				got, found, err := bk.MoveScore(p, want.Col)
				if rgot, rfound, rerr := r.MoveScore(p, want.Col); rgot != got || rfound != found || (rerr == nil) != (err == nil) {
					t.Errorf("%q column %d: Reader.MoveScore = %v, %v, %v; Book.MoveScore = %v, %v, %v", moves, want.Col+1, rgot, rfound, rerr, got, found, err)
				}
				switch {
				case err != nil:
					t.Fatalf("%q column %d: %v", moves, want.Col+1, err)
				case want.From == FromSolver && found:
					t.Errorf("%q column %d: found %v, but the child is not in the book", moves, want.Col+1, got)
				case want.From != FromSolver && (!found || got != want):
					t.Errorf("%q column %d: got %v, %v; want %v", moves, want.Col+1, got, found, want)
				}
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct {
			moves string
			col   int
		}{{"1212121", 2}, {"1111", 0}, {"", 5}} {
			if _, _, err := bk.MoveScore(mustParse(t, board5x4, c.moves), c.col); err == nil {
				t.Errorf("MoveScore(%q, %d) succeeded", c.moves, c.col)
			}
			if _, _, err := r.MoveScore(mustParse(t, board5x4, c.moves), c.col); err == nil {
				t.Errorf("Reader.MoveScore(%q, %d) succeeded", c.moves, c.col)
			}
		}
	})
}
