package book

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// TestAnswerer: a position the book holds is answered with its score,
// one it does not hold with "?", or solved with a solver; with columns,
// each column's score, Unplayable where it cannot be played.
func TestAnswerer(t *testing.T) {
	bk := newBook(t, board5x4)
	putAll(t, bk, solvedEntries(t, board5x4, 4))
	s, err := solver.New(board5x4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(opts AnswerOptions, moves string) (string, bool) {
		t.Helper()
		a, err := bk.NewAnswerer(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := a.Close(); err != nil {
				t.Error(err)
			}
		}()
		var b strings.Builder
		w := bufio.NewWriter(&b)
		solved, err := a.Answer(context.Background(), w, []byte(moves), mustParse(t, board5x4, moves))
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			t.Fatalf("%s: %v", moves, err)
		}
		return b.String(), solved
	}
	scoreOf := func(moves string) string {
		return strconv.Itoa(s.Solve(mustParse(t, board5x4, moves)))
	}
	columns := func(moves string) string {
		scores, ok := s.Analyze(mustParse(t, board5x4, moves))
		var b strings.Builder
		b.WriteString(moves)
		for col, v := range scores {
			if !ok[col] {
				v = Unplayable
			}
			b.WriteString(" " + strconv.Itoa(v))
		}
		return b.String() + "\n"
	}
	for _, c := range []struct {
		opts   AnswerOptions
		moves  string
		want   string
		solved bool
	}{
		{AnswerOptions{}, "1234", "1234 " + scoreOf("1234") + "\n", false},
		{AnswerOptions{}, "12345", "12345 ?\n", false},
		{AnswerOptions{Solver: s}, "12345", "12345 " + scoreOf("12345") + "\n", true},
		{AnswerOptions{Columns: true}, "123", columns("123"), false},
		{AnswerOptions{Columns: true}, "1234", "1234 ? ? ? ? ?\n", false},
		{AnswerOptions{Columns: true, Solver: s}, "1234", columns("1234"), true},
		{AnswerOptions{Columns: true}, "11112", "11112 " + strconv.Itoa(Unplayable) + " ? ? ? ?\n", false},
	} {
		got, solved := answer(c.opts, c.moves)
		if got != c.want || solved != c.solved {
			t.Errorf("%+v: %q: got %q (solved %v), want %q (solved %v)", c.opts, c.moves, got, solved, c.want, c.solved)
		}
	}
}
