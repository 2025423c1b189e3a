package main

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

func TestParsePositionLine(t *testing.T) {
	good := []struct {
		text, moves, score string
		stones             int
	}{
		{"4453", "4453", "", 4},
		{"  4453 -2  ", "4453", "-2", 4},
		{"4453\t7", "4453", "7", 4},
		{"-", "-", "", 0},
		{"- 1", "-", "1", 0},
	}
	for _, c := range good {
		t.Run(c.text, func(t *testing.T) {
			l, err := parsePositionLine(solver.Standard, 3, c.text)
			if err != nil {
				t.Fatal(err)
			}
			if l.num != 3 || l.moves != c.moves || l.score != c.score || l.pos.Moves() != c.stones {
				t.Errorf("got line %d, moves %q, score %q, %d stones", l.num, l.moves, l.score, l.pos.Moves())
			}
		})
	}
	bad := []struct{ text, want string }{
		{"1 2 3", `want "moves" or "moves score", got "1 2 3"`},
		{"4459", `moves "4459": move 4 ('9'): column out of range 1..7`},
		{"1111111", `moves "1111111": move 7 ('1')`},
		{"a", "not a column digit"},
	}
	for _, c := range bad {
		t.Run("bad/"+c.text, func(t *testing.T) {
			_, err := parsePositionLine(solver.Standard, 1, c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestScanLines(t *testing.T) {
	t.Run("numbers and blank lines", func(t *testing.T) {
		var got []textLine
		err := scanLines(strings.NewReader("a\n\n  \nb\r\nc"), func(l textLine) bool {
			got = append(got, l)
			return true
		})
		want := []textLine{{1, "a"}, {4, "b"}, {5, "c"}}
		if err != nil || len(got) != len(want) {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	})
	t.Run("stop", func(t *testing.T) {
		n := 0
		err := scanLines(strings.NewReader("a\nb\nc\n"), func(textLine) bool { n++; return n < 2 })
		if err != nil || n != 2 {
			t.Errorf("called %d times, err %v; want 2 calls", n, err)
		}
	})
	t.Run("line too long", func(t *testing.T) {
		err := scanLines(strings.NewReader("a\n"+strings.Repeat("1", maxLineBytes+1)+"\n"), func(textLine) bool { return true })
		if !errors.Is(err, bufio.ErrTooLong) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("error %v, want a too long line 2", err)
		}
	})
}

func TestReadLines(t *testing.T) {
	t.Run("all lines", func(t *testing.T) {
		lines, errp := readLines(context.Background(), strings.NewReader("x\n\ny\n"))
		var got []textLine
		for l := range lines {
			got = append(got, l)
		}
		if *errp != nil || len(got) != 2 || got[1] != (textLine{3, "y"}) {
			t.Errorf("got %v, %v", got, *errp)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		lines, _ := readLines(ctx, strings.NewReader("x\ny\nz\n"))
		<-lines
		cancel()
		for range lines {
			// Drains at most the line being sent when ctx ended.
		}
	})
}
