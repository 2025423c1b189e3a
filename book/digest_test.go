package book

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/c4book/c4book/solver"
)

// underRoot returns the entries of every position reachable from root by
// legal play with at most depth stones, one per canonical key, a position
// whose last move made four left out, by a plain walk with a set of the
// keys seen: the digest's set, found without its code. The scores are
// made up (fakeScore): a digest does not check them.
func underRoot(tb testing.TB, b *solver.Board, root string, depth int) []Entry {
	tb.Helper()
	seen := map[uint64]bool{}
	var entries []Entry
	var visit func(p solver.Position)
	visit = func(p solver.Position) {
		k := p.CanonicalKey()
		if seen[k] {
			return
		}
		seen[k] = true
		entries = append(entries, Entry{Depth: p.Moves(), Key: k, Value: Value{Score: fakeScore(b, p.Moves(), k), Origin: OriginSolved}})
		if p.Moves() == depth {
			return
		}
		for col := range b.Width() {
			if p.CanPlay(col) && !p.IsWinningMove(col) {
				c := p
				c.Play(col)
				visit(c)
			}
		}
	}
	visit(mustParse(tb, b, root))
	return entries
}

// fakeScore returns a score possible at depth, made from key.
func fakeScore(b *solver.Board, depth int, key uint64) int {
	lo, hi := b.ScoreRange(depth)
	key *= 0x9E3779B97F4A7C15
	return lo + int(key>>40%uint64(hi-lo+1))
}

// plainDigest hashes entries as the digest's format says, without its
// code: sorted by depth then key, 8 bytes of key big-endian and the score
// as one signed byte each.
func plainDigest(entries []Entry) string {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Key, b.Key))
	})
	h := sha256.New()
	for _, e := range sorted {
		var rec [9]byte
		binary.BigEndian.PutUint64(rec[:8], e.Key)
		rec[8] = byte(int8(e.Score))
		h.Write(rec[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// digestBook returns a book of the entries under root with at most depth
// stones (underRoot), and the entries.
func digestBook(tb testing.TB, b *solver.Board, root string, depth int) (*Book, []Entry) {
	tb.Helper()
	entries := underRoot(tb, b, root, depth)
	bk := newBook(tb, b)
	putAll(tb, bk, entries)
	return bk, entries
}

func TestBook_Digest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Every position of 4x4, to the full board: the full boards without a
	// four are in the set, as a job writes them.
	bk, entries := digestBook(t, board4x4, "", 16)
	full := 0
	for _, e := range entries {
		if e.Depth == 16 {
			full++
		}
	}
	if len(entries) != 69837 || full == 0 {
		t.Fatalf("%d positions, %d full boards: want 69,837 (the 4x4 book of c4book generate --depth 16)", len(entries), full)
	}
	want := plainDigest(entries)
	for _, c := range []struct {
		name string
		opts *DigestOptions
	}{
		{"in memory", nil},
		{"spilled", &DigestOptions{MemKeys: 100, TempDir: t.TempDir()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, err := bk.Digest(ctx, "", 16, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != want || d.Positions != int64(len(entries)) {
				t.Errorf("digest %s of %d positions, want %s of %d", d, d.Positions, want, len(entries))
			}
		})
	}
	t.Run("sub-roots and depths", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			root  string
			depth int
		}{{"", 0}, {"-", 7}, {"2", 9}, {"3", 9}, {"1223", 12}, {"1223", 4}, {"2222", 16}} {
			d, err := bk.Digest(ctx, c.root, c.depth, nil)
			if err != nil {
				t.Fatal(err)
			}
			part := underRoot(t, board4x4, c.root, c.depth)
			if want := plainDigest(part); d.String() != want || d.Positions != int64(len(part)) {
				t.Errorf("root %q depth %d: digest %s of %d positions, want %s of %d", c.root, c.depth, d, d.Positions, want, len(part))
			}
		}
	})
}

// TestBook_Digest_format: the digest of a root at its own depth is the
// SHA-256 of its one record, written out by hand.
func TestBook_Digest_format(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	// "5" is the mirror image of "1": the record is the canonical key,
	// that of "1": the player to move has no stone, and column 1 holds
	// one, 0b1 in its five bits (solver.Position.Key).
	p := mustParse(t, board5x4, "5")
	if p.CanonicalKey() != 0b1 {
		t.Fatalf("canonical key of 5 is %#b, want 0b1", p.CanonicalKey())
	}
	if err := bk.Put(p, Value{Score: -3, Origin: OriginDerived}); err != nil {
		t.Fatal(err)
	}
	d, err := bk.Digest(context.Background(), "5", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte{0, 0, 0, 0, 0, 0, 0, 0b1, 0xFD})
	if d.Sum != want || d.Positions != 1 {
		t.Errorf("digest %s of %d positions, want %x of 1", d, d.Positions, want)
	}

	// The worked example of docs/format.md, "Digests".
	std := newBook(t, solver.Standard)
	if err := std.Put(mustParse(t, solver.Standard, "4"), Value{Score: -1, Origin: OriginDerived}); err != nil {
		t.Fatal(err)
	}
	d, err = std.Digest(context.Background(), "4", 1, nil)
	if want := "7fe3c0b71cca775a7aaed861bba01e0d95c57677c07bab0eda133c0931791197"; err != nil || d.String() != want {
		t.Errorf("7x6, root 4: digest %s (%v), want %s", d, err, want)
	}
}

// TestBook_Digest_part: a book built under a root alone, in another book
// with other scores elsewhere, has the digest of the whole book for that
// root: a part rebuilt elsewhere checks against the whole book.
func TestBook_Digest_part(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	whole, _ := digestBook(t, board5x4, "", 8)
	for _, root := range []string{"33", "12", "54", "1122"} {
		part, entries := digestBook(t, board5x4, root, 8)
		// Entries outside the set change nothing: the rest of the book of
		// another part, with other scores.
		var other []Entry
		for _, e := range underRoot(t, board5x4, "", 6) {
			if _, ok, _ := part.GetEntry(e.Depth, e.Key); !ok {
				e.Score = fakeScore(board5x4, e.Depth, e.Key+1)
				other = append(other, e)
			}
		}
		putAll(t, part, other)
		want := plainDigest(entries)
		for name, bk := range map[string]*Book{"whole": whole, "part": part} {
			d, err := bk.Digest(ctx, root, 8, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != want {
				t.Errorf("root %s, %s book: digest %s, want %s", root, name, d, want)
			}
		}
	}
}

func TestBook_DigestSequences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bk, _ := digestBook(t, board4x4, "", 10)
	for _, c := range []struct {
		root  string
		n     int
		lines int // sequences that can be played; -1: not counted here
	}{
		{"", 2, 16},
		{"", 3, 64},
		{"1112", 2, -1},   // column 1 fills: fewer than 16
		{"121212", 2, -1}, // 1 wins at once: no 1x
		{"12121", 2, -1},  // 21, 31 and 41 end in a four
		{"22", 1, 4},
	} {
		whole, seqs, err := bk.DigestSequences(ctx, c.root, 10, c.n, &DigestOptions{Threads: 3})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := bk.Digest(ctx, c.root, 10, nil); err != nil || d != whole {
			t.Errorf("root %q: the root's digest %s, Digest %s (%v)", c.root, whole, d, err)
		}
		// The sequences: every one of n moves that Parse plays from the
		// root, in order, leaving a game not over.
		var want []string
		var all func(s string, n int)
		all = func(s string, n int) {
			if n == 0 {
				if p, err := board4x4.Parse(c.root + s); err == nil && !p.Over() {
					want = append(want, strings.TrimPrefix(c.root, "-")+s)
				}
				return
			}
			for col := range board4x4.Width() {
				all(s+string(rune('1'+col)), n-1)
			}
		}
		all("", c.n)
		var got []string
		for _, s := range seqs {
			got = append(got, s.Moves)
			d, err := bk.Digest(ctx, s.Moves, 10, &DigestOptions{MemKeys: 1 << 12})
			if err != nil || d != s.Digest {
				t.Errorf("root %q: sequence %s: digest %s, Digest %s (%v)", c.root, s.Moves, s.Digest, d, err)
			}
		}
		if !slices.Equal(got, want) || c.lines >= 0 && len(got) != c.lines {
			t.Errorf("root %q, %d moves: sequences %q, want %q", c.root, c.n, got, want)
		}
	}
	for _, c := range []struct {
		root string
		n    int
		want string
	}{
		{"", 0, "want 1 to 10"},
		{"", 11, "want 1 to 10"},
		{"1234", 7, "want 1 to 6"},
	} {
		if _, _, err := bk.DigestSequences(ctx, c.root, 10, c.n, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("root %q, %d moves: error %v, want one containing %q", c.root, c.n, err, c.want)
		}
	}
	// Cancelled once the root's digest is done: an error, not digests
	// left empty.
	whole, err := bk.Digest(ctx, "", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	defer cancel()
	_, _, err = bk.DigestSequences(cancelled, "", 10, 3, &DigestOptions{Threads: 2, Progress: func(hashed int64) {
		if hashed > whole.Positions {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled after the root's digest: error %v, want context.Canceled", err)
	}
	big := newBook(t, solver.Standard)
	if _, _, err := big.DigestSequences(ctx, "", 20, 8, nil); err == nil || !strings.Contains(err.Error(), "more than 1048576") {
		t.Errorf("8 moves on 7x6: error %v, want too many sequences", err)
	}
}

// TestBook_DigestSequences_groups: on 7x6, the 4-move sequences reach
// more positions than one group walk takes (64): each position's digest,
// from walks of several groups on two threads, is Digest's of it.
func TestBook_DigestSequences_groups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const depth = 7
	bk, _ := digestBook(t, solver.Standard, "", depth)
	var hashed atomic.Int64
	whole, seqs, err := bk.DigestSequences(ctx, "", depth, 4, &DigestOptions{Threads: 2, MemKeys: 100,
		Progress: func(n int64) { hashed.Store(max(hashed.Load(), n)) }})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[uint64]Digest{}
	var records int64
	for _, s := range seqs {
		p := mustParse(t, solver.Standard, s.Moves)
		k := p.CanonicalKey()
		want, ok := byKey[k]
		if !ok {
			if want, err = bk.Digest(ctx, s.Moves, depth, &DigestOptions{MemKeys: 1 << 10}); err != nil {
				t.Fatal(err)
			}
			byKey[k] = want
			records += want.Positions
		}
		if s.Digest != want {
			t.Errorf("sequence %s: digest %s of %d positions, Digest %s of %d", s.Moves, s.Digest, s.Positions, want, want.Positions)
		}
	}
	t.Logf("%d sequences, %d positions", len(seqs), len(byKey))
	if len(seqs) != 2401 || len(byKey) <= 2*groupRoots {
		t.Errorf("%d sequences reaching %d positions; want 2401 (7^4, none over) reaching more than %d", len(seqs), len(byKey), 2*groupRoots)
	}
	if got := hashed.Load(); got != whole.Positions+records {
		t.Errorf("progress ended at %d records, want %d: the root's %d and each position's once", got, whole.Positions+records, whole.Positions)
	}
}

// TestDigestGroups: groups cover the positions in order, each of at most
// groupRoots and within one of each other, as few as that allows, with a
// group for each thread, and a multiple of the threads when no group
// falls below half of groupRoots.
func TestDigestGroups(t *testing.T) {
	for _, c := range []struct{ n, threads, want int }{
		{0, 2, 0}, {1, 2, 1}, {3, 8, 3}, {10, 2, 2}, {64, 1, 1}, {65, 1, 2},
		{131, 2, 4}, {131, 1, 3}, {129, 4, 4}, {200, 3, 6}, {70, 2, 2}, {2401, 2, 38},
	} {
		groups := digestGroups(c.n, c.threads)
		if len(groups) != c.want {
			t.Errorf("%d positions, %d threads: %d groups, want %d", c.n, c.threads, len(groups), c.want)
		}
		next, least, most := 0, c.n, 0
		for _, g := range groups {
			if g[0] != next || g[1] <= g[0] {
				t.Fatalf("%d positions, %d threads: groups %v do not cover them in order", c.n, c.threads, groups)
			}
			next = g[1]
			least, most = min(least, g[1]-g[0]), max(most, g[1]-g[0])
		}
		if next != c.n || most > groupRoots || len(groups) > 0 && most-least > 1 {
			t.Errorf("%d positions, %d threads: groups %v", c.n, c.threads, groups)
		}
	}
}

// TestBook_Digest_missing: a book lacking positions of the set fails,
// naming the first missing one in the digest's order with a game from the
// root; a changed score changes the digest.
func TestBook_Digest_missing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	entries := underRoot(t, board5x4, "23", 8)
	// Two holes: the first in the digest's order is the smaller depth,
	// not the first in the walk's order.
	var deep, shallow Entry
	for _, e := range entries {
		if e.Depth == 7 && deep.Depth == 0 {
			deep = e
		}
		if e.Depth == 5 && (shallow.Depth == 0 || e.Key > shallow.Key) {
			shallow = e
		}
	}
	bk := newBook(t, board5x4)
	var kept []Entry
	for _, e := range entries {
		if e != deep && e != shallow {
			kept = append(kept, e)
		}
	}
	putAll(t, bk, kept)
	for _, opts := range []*DigestOptions{nil, {MemKeys: 10, TempDir: t.TempDir()}} {
		_, err := bk.Digest(ctx, "23", 8, opts)
		missing, ok := errors.AsType[*MissingError](err)
		if !ok || !errors.Is(err, ErrNotInBook) {
			t.Fatalf("error %v, want a *MissingError", err)
		}
		if missing.Depth != shallow.Depth || missing.Key != shallow.Key {
			t.Errorf("missing depth %d key %#x, want the first in order, depth %d key %#x", missing.Depth, missing.Key, shallow.Depth, shallow.Key)
		}
		p, perr := board5x4.Parse(missing.Moves)
		if perr != nil || !strings.HasPrefix(missing.Moves, "23") || p.CanonicalKey() != shallow.Key {
			t.Errorf("missing position named %q (%v), not a game from 23 reaching depth %d key %#x", missing.Moves, perr, shallow.Depth, shallow.Key)
		}
		for _, want := range []string{missing.Moves, "5 stones", "not in the book"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	// Digests of sequences: a *MissingError naming one of the holes,
	// whichever walk met it first.
	for _, threads := range []int{1, 2, 4} {
		_, _, err := bk.DigestSequences(ctx, "23", 8, 2, &DigestOptions{Threads: threads, MemKeys: 10, TempDir: t.TempDir()})
		missing, ok := errors.AsType[*MissingError](err)
		if !ok {
			t.Fatalf("sequences, %d threads: error %v, want a *MissingError", threads, err)
		}
		p, perr := board5x4.Parse(missing.Moves)
		hole := missing.Depth == shallow.Depth && missing.Key == shallow.Key || missing.Depth == deep.Depth && missing.Key == deep.Key
		if !hole || perr != nil || p.CanonicalKey() != missing.Key {
			t.Errorf("sequences, %d threads: missing %q (%v), depth %d key %#x: not one of the holes", threads, missing.Moves, perr, missing.Depth, missing.Key)
		}
	}
	// The holes filled, the digest is the plain one; a score changed, it
	// changes.
	putAll(t, bk, []Entry{deep, shallow})
	want := plainDigest(entries)
	if d, err := bk.Digest(ctx, "23", 8, nil); err != nil || d.String() != want {
		t.Fatalf("digest %s (%v), want %s", d, err, want)
	}
	changed := deep
	if lo, _ := board5x4.ScoreRange(changed.Depth); changed.Score > lo {
		changed.Score--
	} else {
		changed.Score++
	}
	changed.Origin = OriginDerived
	putAll(t, bk, []Entry{changed})
	if d, err := bk.Digest(ctx, "23", 8, nil); err != nil || d.String() == want {
		t.Errorf("digest %s (%v) after a score changed: want another than %s", d, err, want)
	}
	// The origin alone is not in the digest.
	changed.Score, changed.Origin = deep.Score, OriginImported
	putAll(t, bk, []Entry{changed})
	if d, err := bk.Digest(ctx, "23", 8, nil); err != nil || d.String() != want {
		t.Errorf("digest %s (%v) after an origin changed: want %s", d, err, want)
	}
}

// TestBook_Digest_mirroredPath: a missing position under a root that is
// the mirror image of its canonical position is named by a game from that
// root, which reaches it or its mirror image.
func TestBook_Digest_mirroredPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, root := range []string{"1", "5", "45", "2154"} {
		entries := underRoot(t, board5x4, root, 7)
		for i := range entries {
			if entries[i].Depth < 5 {
				continue
			}
			bk := newBook(t, board5x4)
			putAll(t, bk, slices.Delete(slices.Clone(entries), i, i+1))
			_, err := bk.Digest(ctx, root, 7, nil)
			missing, ok := errors.AsType[*MissingError](err)
			if !ok {
				t.Fatalf("root %s: error %v, want a *MissingError", root, err)
			}
			p, err := board5x4.Parse(missing.Moves)
			if err != nil || !strings.HasPrefix(missing.Moves, root) || p.CanonicalKey() != entries[i].Key {
				t.Errorf("root %s: missing position named %q (%v), not a game from the root reaching key %#x", root, missing.Moves, err, entries[i].Key)
			}
			break
		}
	}
}

// TestBook_Digest_longPath: a position more moves below the root than a
// path holds is named by solver's MoveString, a game from the empty board.
func TestBook_Digest_longPath(t *testing.T) {
	t.Parallel()
	entries := underRoot(t, board5x4, "3", 6)
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.Depth == 6 })
	hole := entries[i]
	bk := newBook(t, board5x4)
	putAll(t, bk, slices.Delete(slices.Clone(entries), i, i+1))
	dg, err := bk.newDigester(DigestOptions{MemKeys: 1 << 10, TempDir: t.TempDir()}, new(atomic.Int64))
	if err != nil {
		t.Fatal(err)
	}
	defer dg.close()
	dg.walker.pathMoves = 2
	_, err = dg.digest(context.Background(), "3", mustParse(t, board5x4, "3"), 6)
	missing, ok := errors.AsType[*MissingError](err)
	if !ok {
		t.Fatalf("error %v, want a *MissingError", err)
	}
	if p, err := board5x4.Parse(missing.Moves); err != nil || p.CanonicalKey() != hole.Key || missing.Depth != hole.Depth {
		t.Errorf("missing position named %q (%v) of depth %d, want a game reaching depth %d key %#x", missing.Moves, err, missing.Depth, hole.Depth, hole.Key)
	}
}

func TestBook_Digest_errors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bk := newBook(t, board5x4)
	for _, c := range []struct {
		root  string
		depth int
		want  string
	}{
		{"6", 4, "digest root"},
		{"111111", 8, "digest root"},
		{"1212121", 8, "finished game"},
		{"12", 1, "digest depth 1: must be between the root's 2 stones and 20"},
		{"", 21, "digest depth 21"},
	} {
		if _, err := bk.Digest(ctx, c.root, c.depth, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("root %q depth %d: error %v, want one containing %q", c.root, c.depth, err, c.want)
		}
	}
	closed := openBook(t, filepath.Join(t.TempDir(), "book"), testOptions(board5x4))
	closed.Close()
	if _, err := closed.Digest(ctx, "", 2, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed book: error %v, want ErrClosed", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	full, _ := digestBook(t, board4x4, "", 12)
	if _, err := full.Digest(cancelled, "", 12, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
}
