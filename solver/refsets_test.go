package solver

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testdataDir returns the folder of Pons' reference sets: $C4BOOK_TESTDATA
// or ../../shared/testdata/pons from this package. It skips the test when
// the folder is absent.
func testdataDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("C4BOOK_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata", "pons")
	}
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("reference sets not found at %s (set C4BOOK_TESTDATA to the folder holding Test_L3_R1 ...): %v", dir, err)
	}
	return dir
}

// leavesFile returns the absolute path of name, a set of leaves next to
// the folder of the reference sets (leaves-d8.txt: 8-stone positions of
// the kind a depth-8 book solves), or skips the test without it.
func leavesFile(tb testing.TB, name string) string {
	tb.Helper()
	path, err := filepath.Abs(filepath.Join(testdataDir(tb), "..", name))
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		tb.Skipf("%s not found next to the reference sets: %v", name, err)
	}
	return path
}

// refCase is one line of a reference set: a move string and its score.
type refCase struct {
	line  int
	moves string
	score int
}

// readRefSet reads the first limit lines of a reference set (all if limit
// is 0): name is a file of the reference sets' folder, or an absolute path.
func readRefSet(tb testing.TB, name string, limit int) []refCase {
	tb.Helper()
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(testdataDir(tb), name)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []refCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan() && (limit == 0 || len(cases) < limit); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			tb.Fatalf("%s:%d: want \"moves score\", got %q", name, n, sc.Text())
		}
		score, err := strconv.Atoi(fields[1])
		if err != nil {
			tb.Fatalf("%s:%d: %v", name, n, err)
		}
		cases = append(cases, refCase{line: n, moves: fields[0], score: score})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// refSets are Pons' six reference sets, easiest first, with the number of
// lines checked in -short mode (0: all).
var refSets = []struct {
	name  string
	short int
}{
	{"Test_L3_R1", 0},
	{"Test_L2_R1", 0},
	{"Test_L2_R2", 50},
	{"Test_L1_R1", 0},
	{"Test_L1_R2", 50},
	{"Test_L1_R3", 8},
}

func TestSolver_Solve_referenceSets(t *testing.T) {
	s, err := New(Standard, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range refSets {
		t.Run(set.name, func(t *testing.T) {
			limit := 0
			if testing.Short() {
				limit = set.short
			}
			var nodes uint64
			cases := readRefSet(t, set.name, limit)
			for _, c := range cases {
				p, err := Standard.Parse(c.moves)
				if err != nil {
					t.Fatalf("line %d: %v", c.line, err)
				}
				s.Table().Clear()
				s.ResetNodes()
				if got := s.Solve(p); got != c.score {
					t.Errorf("line %d: Solve(%s) = %d, want %d\n%v", c.line, c.moves, got, c.score, p)
				}
				nodes += s.Nodes()
			}
			t.Logf("%d positions, mean nodes %.1f", len(cases), float64(nodes)/float64(len(cases)))
		})
	}
}

// BenchmarkSolver_leaves solves the first 20 positions of leaves-d8.txt,
// each with a cleared table of the default size, as c4book bench does; an
// op is one position. The node count per position is a signature of the
// search too.
func BenchmarkSolver_leaves(b *testing.B) {
	cases := readRefSet(b, leavesFile(b, "leaves-d8.txt"), 20)
	s, err := New(Standard, 0)
	if err != nil {
		b.Fatal(err)
	}
	positions := make([]Position, len(cases))
	for i, c := range cases {
		if positions[i], err = Standard.Parse(c.moves); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	s.ResetNodes()
	solved := 0
	for b.Loop() {
		i := solved % len(cases)
		b.StopTimer()
		s.Table().Clear()
		b.StartTimer()
		if got := s.Solve(positions[i]); got != cases[i].score {
			b.Fatalf("Solve(%s) = %d, want %d", cases[i].moves, got, cases[i].score)
		}
		solved++
	}
	b.ReportMetric(float64(s.Nodes())/float64(solved), "nodes/op")
}

// BenchmarkSolver_columns solves the columns of the positions of
// leaves-d14.txt in turn, as c4book serve does for a 14-stone position
// of a depth-14 book: every child, one table of the server's size kept
// warm. An op is one position's children. "near" guesses each child's
// score from the previous child's outcome; "atLeast" also tells the
// solver that each child scores at least minus the position's score,
// which the book gives. With -benchtime 300x each op is one position of
// the set, once.
func BenchmarkSolver_columns(b *testing.B) {
	cases := readRefSet(b, leavesFile(b, "leaves-d14.txt"), 0)
	for _, bc := range []struct {
		name    string
		bounded bool
	}{{"near", false}, {"atLeast", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := New(Standard, DefaultTableBytes)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			solved := 0
			for b.Loop() {
				c := cases[solved%len(cases)]
				p, err := Standard.Parse(c.moves)
				if err != nil {
					b.Fatal(err)
				}
				least, guess, best := MinScore, 0, MinScore
				if bc.bounded {
					least = -c.score
				}
				for _, child := range p.Children() {
					v, err := s.SolveAtLeastContext(ctx, child, least, guess)
					if err != nil {
						b.Fatal(err)
					}
					guess, best = Outcome(v), max(best, -v)
				}
				if best != c.score {
					b.Fatalf("%s: best column %d, want %d", c.moves, best, c.score)
				}
				solved++
			}
			b.ReportMetric(float64(s.Nodes())/float64(solved), "nodes/op")
		})
	}
}
