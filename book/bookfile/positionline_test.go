package bookfile

import (
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
			l, err := ParsePositionLine(solver.Standard, Line{Num: 3, Text: []byte(c.text)})
			if err != nil {
				t.Fatal(err)
			}
			if l.Num != 3 || l.Moves != c.moves || l.Score != c.score || l.Pos.Moves() != c.stones {
				t.Errorf("got line %d, moves %q, score %q, %d stones", l.Num, l.Moves, l.Score, l.Pos.Moves())
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
		_, err := ParsePositionLine(solver.Standard, Line{Num: 1, Text: []byte("1111"), TooLong: true})
		if err == nil || !strings.Contains(err.Error(), "longer than 4096 bytes") || !strings.Contains(err.Error(), `"1111"...`) {
			t.Errorf("error %v, want a line too long", err)
		}
	})
	for _, c := range bad {
		t.Run("bad/"+c.text, func(t *testing.T) {
			_, err := ParsePositionLine(solver.Standard, Line{Num: 1, Text: []byte(c.text)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// scannedLine is a Line as a test keeps it: its text copied.
type scannedLine struct {
	num     int
	text    string
	tooLong bool
	quoted  string
}

// scanLinesOf returns the lines of ScanLines on in that hold something
// (not Ignorable), until fn returns false.
func scanLinesOf(in string, fn func(scannedLine) bool) ([]scannedLine, error) {
	var got []scannedLine
	err := ScanLines(strings.NewReader(in), func(l Line) bool {
		if l.Ignorable() {
			return true
		}
		s := scannedLine{num: l.Num, text: string(l.Text), tooLong: l.TooLong, quoted: l.Quote()}
		got = append(got, s)
		return fn(s)
	})
	return got, err
}

func TestScanLines(t *testing.T) {
	lineOf := func(num int, text string) scannedLine {
		return scannedLine{num: num, text: text, quoted: Line{Text: []byte(text)}.Quote()}
	}
	all := func(scannedLine) bool { return true }
	t.Run("numbers, blank lines and comments", func(t *testing.T) {
		got, err := scanLinesOf("a\n\n  \n# note\nb\r\n  #x\nc", all)
		want := []scannedLine{lineOf(1, "a"), lineOf(5, "b"), lineOf(7, "c")}
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
		_, err := scanLinesOf("a\nb\nc\n", func(scannedLine) bool { n++; return n < 2 })
		if err != nil || n != 2 {
			t.Errorf("called %d times, err %v; want 2 calls", n, err)
		}
	})
	t.Run("line too long", func(t *testing.T) {
		// A line of a megabyte is given by its first bytes, and the lines
		// after it are read.
		got, err := scanLinesOf("a\n"+strings.Repeat("1", 1<<20)+"\nb\n", all)
		if err != nil || len(got) != 3 || !got[1].tooLong || got[1].num != 2 || got[2] != lineOf(3, "b") {
			t.Fatalf("got %v, %v", got, err)
		}
		if len(got[1].text) > 100 || !strings.HasSuffix(got[1].quoted, "...") {
			t.Errorf("long line given as %d bytes, quoted %s", len(got[1].text), got[1].quoted)
		}
	})
}
