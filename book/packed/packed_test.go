package packed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/c4book/c4book/solver"
)

// entry is a position of a set with its exact score.
type entry struct {
	stones int
	key    uint64
	score  int
	pos    solver.Position
}

// setOf returns the set of root and depth on b, in the set's order, each
// position scored by the solver: the plain book a packed one must equal.
func setOf(t testing.TB, b *solver.Board, root string, depth int) []entry {
	t.Helper()
	r, err := b.Parse(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := solver.New(b, 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	level := []solver.Position{r}
	for stones := r.Moves(); stones <= depth; stones++ {
		slices.SortFunc(level, func(x, y solver.Position) int {
			a, c := x.CanonicalKey(), y.CanonicalKey()
			switch {
			case a < c:
				return -1
			case a > c:
				return 1
			}
			return 0
		})
		level = slices.CompactFunc(level, func(x, y solver.Position) bool { return x.CanonicalKey() == y.CanonicalKey() })
		var next []solver.Position
		for _, p := range level {
			out = append(out, entry{stones: stones, key: p.CanonicalKey(), score: s.Solve(p), pos: p})
			if stones == depth {
				continue
			}
			for _, c := range p.Children() {
				if !c.LastMoveWon() {
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return out
}

// pack builds the packed book of the set's entries.
func pack(t testing.TB, b *solver.Board, root string, depth int, set []entry) []byte {
	t.Helper()
	bld, err := NewBuilder(Spec{Board: b, Root: root, Depth: depth})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range set {
		if err := bld.Add(e.stones, e.key, e.score); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := bld.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// digestOf returns the book digest of the set (book/digest.go), computed
// here from its definition.
func digestOf(set []entry) [32]byte {
	h := sha256.New()
	for _, e := range set {
		h.Write(binary.BigEndian.AppendUint64(nil, e.key))
		h.Write([]byte{byte(int8(e.score))})
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

var cases = []struct {
	w, h  int
	root  string
	depth int
}{
	{4, 4, "", 16},
	{4, 4, "12", 12},
	{5, 4, "", 9},
	{5, 4, "3", 10},
	{4, 5, "2", 12},
}

// TestBuilder_roundTrip: a packed book gives every position of its set its
// score, by position, by mirror image and by key; says so of no other
// position; and its header has the set's counts and digest.
func TestBuilder_roundTrip(t *testing.T) {
	for _, tc := range cases {
		b := solver.MustBoard(tc.w, tc.h)
		set := setOf(t, b, tc.root, tc.depth)
		data := pack(t, b, tc.root, tc.depth, set)
		f, err := OpenBytes("test", data)
		if err != nil {
			t.Fatalf("%v root %q depth %d: %v", b, tc.root, tc.depth, err)
		}
		name := b.String() + " root " + tc.root
		if f.Positions() != uint64(len(set)) || f.Digest() != digestOf(set) || f.Depth() != tc.depth || f.Root() != tc.root {
			t.Errorf("%s: header: %d positions, depth %d, root %q, digest %x; want %d, %d, %q, %x",
				name, f.Positions(), f.Depth(), f.Root(), f.Digest(), len(set), tc.depth, tc.root, digestOf(set))
		}
		inSet := make(map[uint64]int, len(set))
		for _, e := range set {
			inSet[e.key] = e.score
			for _, p := range []solver.Position{e.pos, e.pos.Mirror()} {
				got, ok, err := f.Get(&p)
				if err != nil || !ok || got != e.score {
					t.Fatalf("%s: Get of\n%v= %d, %v, %v; want %d", name, p, got, ok, err, e.score)
				}
			}
			if got, ok, err := f.GetKey(e.stones, e.key); err != nil || !ok || got != e.score {
				t.Fatalf("%s: GetKey(%d, %#x) = %d, %v, %v; want %d", name, e.stones, e.key, got, ok, err, e.score)
			}
		}
		var sum uint64
		for _, lv := range f.Levels() {
			sum += lv.Positions
		}
		if sum != uint64(len(set)) {
			t.Errorf("%s: levels hold %d positions, want %d", name, sum, len(set))
		}
		// Every other key of the board is not in the book: all of them
		// on 4x4, random ones on the larger boards.
		checkOutside := func(key uint64) {
			p, err := b.PositionFromKey(key)
			if err != nil {
				return
			}
			_, want := inSet[p.CanonicalKey()]
			if want && p.Moves() <= tc.depth {
				return
			}
			if got, ok, err := f.Get(&p); ok || err != nil {
				t.Fatalf("%s: Get of a position outside the set = %d, %v, %v\n%v", name, got, ok, err, p)
			}
		}
		if tc.w == 4 && tc.h == 4 {
			step := uint64(1)
			if testing.Short() {
				step = 7 // every seventh key of the board
			}
			for key := uint64(0); key < 1<<20; key += step {
				checkOutside(key)
			}
		} else {
			rng := rand.New(rand.NewPCG(uint64(tc.w), uint64(tc.depth)))
			n := 200000
			if testing.Short() {
				n = 30000
			}
			for range n {
				checkOutside(rng.Uint64() >> (64 - b.KeyBits()))
			}
		}
	}
}

// TestBuilder_buckets: levels split into many buckets (as the levels of
// books of millions of positions are) read as one bucket a level does.
func TestBuilder_buckets(t *testing.T) {
	defer func(n int) { bucketKeys = n }(bucketKeys)
	bucketKeys = 300
	b := solver.MustBoard(5, 4)
	set := setOf(t, b, "", 10)
	f, err := OpenBytes("buckets", pack(t, b, "", 10, set))
	if err != nil {
		t.Fatal(err)
	}
	many := 0
	for i := range f.h.levels {
		many = max(many, len(f.h.levels[i].buckets))
	}
	if many < 10 {
		t.Fatalf("at most %d buckets a level: the test proves little", many)
	}
	for _, e := range set {
		if got, ok, err := f.Get(&e.pos); err != nil || !ok || got != e.score {
			t.Fatalf("Get = %d, %v, %v; want %d", got, ok, err, e.score)
		}
	}
}

// TestOpen_file: a packed book written to a file opens mapped, and reads
// as the bytes do.
func TestOpen_file(t *testing.T) {
	b := solver.MustBoard(5, 4)
	set := setOf(t, b, "", 9)
	path := filepath.Join(t.TempDir(), "b.c4pack")
	if err := os.WriteFile(path, pack(t, b, "", 9, set), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	for _, e := range set {
		if got, ok, err := f.Get(&e.pos); err != nil || !ok || got != e.score {
			t.Fatalf("Get = %d, %v, %v; want %d", got, ok, err, e.score)
		}
	}
}

// TestOpen_damaged: a file with any one byte changed, or cut short, either
// does not open (naming the damage) or gives every position its score or
// an ErrDamaged: never a wrong score.
func TestOpen_damaged(t *testing.T) {
	b := solver.MustBoard(4, 4)
	set := setOf(t, b, "", 9)
	good := pack(t, b, "", 9, set)
	t.Logf("%d bytes", len(good))
	for cut := range len(good) {
		if _, err := OpenBytes("cut", good[:cut]); err == nil {
			t.Fatalf("a file cut to %d of %d bytes opens", cut, len(good))
		} else if cut >= MagicLen && !errors.Is(err, ErrDamaged) {
			t.Fatalf("cut to %d bytes: %v, want ErrDamaged", cut, err)
		}
	}
	opened, refused := 0, 0
	step, every := 1, 1
	if testing.Short() {
		// A byte in 13, every part of the file still, and a position in
		// 7 of each file that opens (the blocks' checksums fail at the
		// first read of a damaged block, whichever position reads it).
		step, every = 13, 7
	}
	for i := 0; i < len(good); i += step {
		bad := slices.Clone(good)
		bad[i] ^= 1 << (i % 8)
		f, err := OpenBytes("bad", bad)
		if err != nil {
			if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrNotPacked) && !errors.Is(err, ErrNewerFormat) {
				t.Fatalf("byte %d changed: %v", i, err)
			}
			refused++
			continue
		}
		opened++
		for j := 0; j < len(set); j += every {
			e := &set[j]
			got, ok, err := f.Get(&e.pos)
			switch {
			case err != nil:
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("byte %d changed: %v", i, err)
				}
			case !ok || got != e.score:
				t.Fatalf("byte %d changed: Get = %d, %v; want %d", i, got, ok, e.score)
			}
		}
		if err := f.Check(); err == nil || !errors.Is(err, ErrDamaged) {
			t.Fatalf("byte %d of the data changed: Check = %v", i, err)
		}
	}
	t.Logf("%d damaged files refused at open, %d opened and caught by the blocks' checksums", refused, opened)
}

// FuzzOpenBytes: no input makes the reader panic or read outside it.
func FuzzOpenBytes(f *testing.F) {
	b := solver.MustBoard(4, 4)
	set := setOf(f, b, "", 6)
	good := pack(f, b, "", 6, set)
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte(formatMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := OpenBytes("fuzz", data)
		if err != nil {
			return
		}
		for _, e := range set {
			pf.Get(&e.pos)
		}
		pf.Check()
	})
}

// FuzzOpenBytes_header: as FuzzOpenBytes, with the header's checksum made
// right, so that the fuzzer reaches the header's fields (a damaged file's
// header fails its checksum first).
func FuzzOpenBytes_header(f *testing.F) {
	b := solver.MustBoard(4, 4)
	set := setOf(f, b, "12", 8)
	f.Add(pack(f, b, "12", 8, set))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= prefixLen+crcLen && IsPacked(data) {
			if n := int(binary.LittleEndian.Uint32(data[12:])); n >= prefixLen+crcLen && n <= len(data) {
				binary.LittleEndian.PutUint32(data[n-crcLen:], crc32.Checksum(data[:n-crcLen], crcTable))
			}
		}
		pf, err := OpenBytes("fuzz", data)
		if err != nil {
			return
		}
		for _, e := range set {
			pf.Get(&e.pos)
		}
		pf.Levels()
	})
}

// TestFile_concurrent: lookups from several goroutines at once on a file
// none of whose blocks was checked yet give every score (run with -race:
// the blocks' checked bits are shared).
func TestFile_concurrent(t *testing.T) {
	b := solver.MustBoard(5, 4)
	set := setOf(t, b, "", 9)
	data := pack(t, b, "", 9, set)
	f, err := OpenBytes("concurrent", data)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range set {
				e := &set[(i*(g+1))%len(set)]
				if got, ok, err := f.Get(&e.pos); err != nil || !ok || got != e.score {
					done <- fmt.Errorf("goroutine %d: Get = %d, %v, %v; want %d", g, got, ok, err, e.score)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
