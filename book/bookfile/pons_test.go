package bookfile

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// refKey3 computes Pons' base-3 key from a move string, on a grid of
// stones, independently of the bitboard: stones of the player to move are
// digit 1, the opponent's 2, each column ends with a 0, the smaller of the
// left-to-right and right-to-left readings, divided by 3.
func refKey3(width int, moves string) uint64 {
	grid := make([][]int, width) // player (0 first, 1 second) of each stone, bottom up
	for i, c := range moves {
		col := int(c - '1')
		grid[col] = append(grid[col], i%2)
	}
	toMove := len(moves) % 2
	read := func(order []int) uint64 {
		var k uint64
		for _, col := range order {
			for _, player := range grid[col] {
				k *= 3
				if player == toMove {
					k += 1
				} else {
					k += 2
				}
			}
			k *= 3
		}
		return k
	}
	var fwd, rev []int
	for c := range width {
		fwd = append(fwd, c)
		rev = append(rev, width-1-c)
	}
	return min(read(fwd), read(rev)) / 3
}

func TestPonsKey3(t *testing.T) {
	t.Parallel()
	// From the comment of Position::key3: the game "45" is the base-3
	// digits 0 0 0 1 0 2 0 0 0; without the last 0, 1*3^5 + 2*3^3 / 3.
	for _, moves := range []string{"45", "43"} {
		p := mustParse(t, solver.Standard, moves)
		if got := ponsKey3(solver.Standard, p.Key()); got != 99 {
			t.Errorf("key3(%s) = %d, want 99", moves, got)
		}
	}
	empty := solver.Standard.NewPosition()
	if got := ponsKey3(solver.Standard, empty.Key()); got != 0 {
		t.Errorf("key3(empty) = %d, want 0", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, b := range []*solver.Board{solver.Standard, board5x4, board4x4, solver.MustBoard(8, 7)} {
		for range 300 {
			p := b.NewPosition()
			var moves []byte
			for p.Moves() < b.Cells() && len(moves) < 30 {
				col := rng.IntN(b.Width())
				if !p.CanPlay(col) || p.IsWinningMove(col) {
					if p.CanWinNext() {
						break
					}
					continue
				}
				p.Play(col)
				moves = append(moves, byte('1'+col))
				want := refKey3(b.Width(), string(moves))
				if got := ponsKey3(b, p.Key()); got != want {
					t.Fatalf("%v: key3(%s) = %d, want %d", b, moves, got, want)
				}
				if m := p.Mirror(); ponsKey3(b, m.Key()) != want {
					t.Fatalf("%v: key3 of the mirror of %s differs", b, moves)
				}
			}
		}
	}
}

func TestPonsSize(t *testing.T) {
	t.Parallel()
	// The smallest primes above 2^21 and 2^23 (Pons' own 7x6 book uses
	// 2^23) and 2^27.
	for logSize, want := range map[int]uint64{21: 2097169, 23: 8388617, 27: 134217757} {
		if got := ponsSize(logSize); got != want {
			t.Errorf("ponsSize(%d) = %d, want %d", logSize, got, want)
		}
	}
}

func TestPonsKeyBytes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		depth, logSize, want int
	}{
		{12, 21, 1}, // 3^18 < 2^29.
		{12, 23, 1},
		{14, 23, 2}, // Pons' generator: 20*log2(3) = 31.7 bits, 23 in the slot: 9 bits, 2 bytes.
		{20, 21, 4}, // 3^26 = 2^41.2 > 2^(21+16).
		{16, 27, 1}, // 3^22 = 2^34.9 < 2^(27+8).
		{31, 27, 4},
		{32, 27, 0}, // 3^38 > 2^59: refused.
	}
	for _, c := range cases {
		got, err := ponsKeyBytes(solver.Standard, c.depth, ponsSize(c.logSize))
		if c.want == 0 {
			if err == nil {
				t.Errorf("depth %d log %d: %d bytes, want an error", c.depth, c.logSize, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("depth %d log %d: %d bytes, %v; want %d", c.depth, c.logSize, got, err, c.want)
		}
	}
}

func TestExportPons(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	entries := solvedEntries(t, board5x4, 8)
	// Leave depth 7 out: its positions must not be found in the file.
	var stored, absent []book.Entry
	for _, e := range entries {
		if e.Depth == 7 {
			absent = append(absent, e)
		} else {
			stored = append(stored, e)
		}
	}
	putAll(t, bk, stored)
	lost := map[uint64]string{}
	var buf bytes.Buffer
	r, err := ExportPons(bk, &buf, &PonsOptions{Lost: func(e book.Entry, reason string) { lost[e.Key] = reason }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Depth != 8 || r.LogSize != 21 || r.KeyBytes != 1 || r.Entries != int64(len(stored)) ||
		r.Stored+r.Collided+r.OutOfRange != r.Entries || int64(len(lost)) != r.Collided+r.OutOfRange {
		t.Errorf("report %+v, lost %d", r, len(lost))
	}
	data := buf.Bytes()
	if want := []byte{5, 4, 8, 1, 1, 21}; !bytes.Equal(data[:6], want) {
		t.Errorf("header % x, want % x", data[:6], want)
	}
	if want := 6 + int(r.Size)*(r.KeyBytes+1); len(data) != want || r.Bytes != int64(want) {
		t.Errorf("%d bytes (report %d), want %d", len(data), r.Bytes, want)
	}

	pb, err := ReadPons(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if pb.Len() != int(r.Stored) {
		t.Errorf("file holds %d positions, report says %d", pb.Len(), r.Stored)
	}
	for _, e := range stored {
		p, _ := board5x4.PositionFromKey(e.Key)
		score, ok := pb.Get(p)
		_, isLost := lost[e.Key]
		switch {
		case ok && score != e.Score:
			t.Fatalf("%v: file says %d", e, score)
		case ok && isLost:
			t.Fatalf("%v: found but reported lost (%s)", e, lost[e.Key])
		case !ok && !isLost:
			t.Fatalf("%v: not found and not reported lost", e)
		}
		if m := p.Mirror(); ok {
			if s, ok := pb.Get(m); !ok || s != score {
				t.Fatalf("%v: mirror not found", e)
			}
		}
	}
	for _, e := range absent {
		p, _ := board5x4.PositionFromKey(e.Key)
		if score, ok := pb.Get(p); ok {
			t.Fatalf("%v: not exported, found with score %d", e, score)
		}
	}
	deeper := mustParse(t, board5x4, "123451234")
	if _, ok := pb.Get(deeper); ok {
		t.Error("position deeper than the file found")
	}

	t.Run("collisions", func(t *testing.T) {
		// On 7x6 base-3 keys exceed the table size from depth 8 on, and
		// positions collide: the shallower keeps the slot.
		bk := newBook(t, solver.Standard)
		w := bk.NewBatch()
		defer w.Close()
		var entries []book.Entry
		walk(solver.Standard, 8, func(p solver.Position) {
			e := book.EntryOf(p, book.Value{Score: int(p.Key()%7) - 3, Origin: book.OriginSolved})
			if p.CanWinNext() {
				e.Score = solver.Standard.WinNowScore(p.Moves())
			}
			entries = append(entries, e)
			if err := w.Put(e); err != nil {
				t.Fatal(err)
			}
		})
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		lost := map[uint64]int{}
		var buf bytes.Buffer
		r, err := ExportPons(bk, &buf, &PonsOptions{Lost: func(e book.Entry, reason string) { lost[e.Key] = e.Depth }})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", r)
		if r.Collided == 0 || r.Stored+r.Collided != int64(len(entries)) {
			t.Errorf("report %+v for %d entries", r, len(entries))
		}
		pb, err := ReadPons(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p, _ := solver.Standard.PositionFromKey(e.Key)
			score, ok := pb.Get(p)
			_, isLost := lost[e.Key]
			if ok == isLost || (ok && score != e.Score) {
				t.Fatalf("%v: Get = %d, %v; lost %v", e, score, ok, isLost)
			}
		}
	})

	t.Run("max depth", func(t *testing.T) {
		var buf bytes.Buffer
		r, err := ExportPons(bk, &buf, &PonsOptions{MaxDepth: 4, LogSize: 22})
		if err != nil || r.Depth != 4 || r.LogSize != 22 || r.Collided != 0 {
			t.Fatalf("ExportPons(depth 4) = %+v, %v", r, err)
		}
		if _, err := ReadPons(&buf); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bad log size", func(t *testing.T) {
		if _, err := ExportPons(bk, &bytes.Buffer{}, &PonsOptions{LogSize: 20}); err == nil {
			t.Error("log size 20 accepted")
		}
	})
}

func TestPonsValue(t *testing.T) {
	t.Parallel()
	b := solver.Standard
	if ponsMinScore(b) != -18 || ponsMaxScore(b) != 18 {
		t.Errorf("7x6: MIN_SCORE %d MAX_SCORE %d, want -18 18", ponsMinScore(b), ponsMaxScore(b))
	}
	for s := -18; s <= 18; s++ {
		v := toPonsValue(b, s)
		if v == 0 || fromPonsValue(b, v) != s {
			t.Errorf("score %d: value %d", s, v)
		}
	}
	if toPonsValue(b, -19) != 0 || toPonsValue(b, 19) != 0 {
		t.Error("scores outside [-18, 18] have a value")
	}
	// On 5x5 (odd cells) MIN_SCORE is -9, but a loss to the opponent's
	// fourth stone after 5 moves scores -10.
	b55 := solver.MustBoard(5, 5)
	if lost := -(b55.Cells() - 5) / 2; toPonsValue(b55, lost) != 0 {
		t.Errorf("5x5: score %d has a value", lost)
	}
}

func TestReadPons_errors(t *testing.T) {
	t.Parallel()
	good := func() []byte {
		size := ponsSize(21)
		data := []byte{7, 6, 12, 1, 1, 21}
		return append(data, make([]byte, 2*size)...)
	}
	if _, err := ReadPons(bytes.NewReader(good())); err != nil {
		t.Fatalf("empty 7x6 book: %v", err)
	}
	cases := map[string]func([]byte) []byte{
		"short header":  func(d []byte) []byte { return d[:4] },
		"bad board":     func(d []byte) []byte { d[0] = 10; return d },
		"depth":         func(d []byte) []byte { d[2] = 43; return d },
		"key bytes 3":   func(d []byte) []byte { d[3] = 3; return d },
		"value bytes 2": func(d []byte) []byte { d[4] = 2; return d },
		"log size 20":   func(d []byte) []byte { d[5] = 20; return d },
		"log size 28":   func(d []byte) []byte { d[5] = 28; return d },
		"truncated":     func(d []byte) []byte { return d[:len(d)-1] },
		"trailing data": func(d []byte) []byte { return append(d, 0) },
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadPons(bytes.NewReader(corrupt(good()))); err == nil {
				t.Error("ReadPons succeeded")
			} else {
				t.Log(err)
			}
		})
	}
}
