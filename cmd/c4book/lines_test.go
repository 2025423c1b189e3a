package main

import (
	"context"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

func TestParsePositionLine(t *testing.T) {
	t.Parallel()
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
			l, err := parsePositionLine(solver.Standard, lineOf(3, c.text))
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
	t.Run("too long", func(t *testing.T) {
		_, err := parsePositionLine(solver.Standard, textLine{num: 1, text: "1111", tooLong: true, quoted: `"1111"...`})
		if err == nil || !strings.Contains(err.Error(), "longer than 4096 bytes") {
			t.Errorf("error %v, want a line too long", err)
		}
	})
	for _, c := range bad {
		t.Run("bad/"+c.text, func(t *testing.T) {
			_, err := parsePositionLine(solver.Standard, lineOf(1, c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// lineOf returns the textLine of text, as scanLines makes it.
func lineOf(num int, text string) textLine {
	return textLine{num: num, text: text, quoted: book.Line{Text: []byte(text)}.Quote()}
}

func TestScanLines(t *testing.T) {
	t.Parallel()
	t.Run("numbers, blank lines and comments", func(t *testing.T) {
		var got []textLine
		err := scanLines(strings.NewReader("a\n\n  \n# note\nb\r\n  #x\nc"), func(l textLine) bool {
			got = append(got, l)
			return true
		})
		want := []textLine{lineOf(1, "a"), lineOf(5, "b"), lineOf(7, "c")}
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
		// A line of a megabyte is given by its first bytes, and the lines
		// after it are read.
		var got []textLine
		err := scanLines(strings.NewReader("a\n"+strings.Repeat("1", 1<<20)+"\nb\n"), func(l textLine) bool {
			got = append(got, l)
			return true
		})
		if err != nil || len(got) != 3 || !got[1].tooLong || got[1].num != 2 || got[2] != lineOf(3, "b") {
			t.Fatalf("got %v, %v", got, err)
		}
		if len(got[1].text) > 100 || !strings.HasSuffix(got[1].quoted, "...") {
			t.Errorf("long line given as %d bytes, quoted %s", len(got[1].text), got[1].quoted)
		}
	})
}

func TestReadLines(t *testing.T) {
	t.Parallel()
	t.Run("all lines", func(t *testing.T) {
		lines, errp := readLines(context.Background(), strings.NewReader("x\n\ny\n"))
		var got []textLine
		for l := range lines {
			got = append(got, l)
		}
		if *errp != nil || len(got) != 2 || got[1] != lineOf(3, "y") {
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
