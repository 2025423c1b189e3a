package book

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"os"
	"sync/atomic"

	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

// # Digests
//
// The digest of a root and a depth D is the SHA-256 of one record for each
// position of the set a generation job of that root and depth fills: every
// position reachable from the root by legal play with at most D stones,
// without going through a position whose last move made four, one record
// per canonical key (a position and its mirror image share one). A
// position whose last move made four is not in the set; a full board
// without a four is, as a job writes it (score 0). Each record is 9
// bytes:
//
//	 byte 0                                              7       8
//	+-----------------------------------------------------+-------+
//	|        canonical key, uint64 big-endian             | score |
//	+-----------------------------------------------------+-------+
//	  solver's Position.CanonicalKey                        int8, 2's complement
//
// The records are ordered by the number of stones of their position, then
// by canonical key, ascending: the order of the book's own keys, so that
// the records of a depth are the book's entries of that depth in their
// order. The digest is SHA-256 of the records one after the other, with
// nothing before, between or after them: no header, no count, no depth (a
// key tells its number of stones). The score is the exact score in Pons'
// convention; how it was obtained (solved, derived, imported, by which
// worker) is not in the record, so two books of the same positions and
// scores have the same digest however they were built. The board is not in
// it either: a key has its meaning on one board, and a digest is compared
// with the digest of the same board.
//
// The format is version 1 of digests. A change of it would change every
// digest, and would be a new version, named wherever digests are
// published.
const digestRecordLen = 9 // canonical key (8 bytes), score (1)

// DefaultDigestMemKeys is the default DigestOptions.MemKeys: 16 MiB of
// keys (with the path that names a missing position), as a job's plan
// takes.
const DefaultDigestMemKeys = 1 << 20

// MaxDigestSequences bounds the sequences of DigestSequences: Width^n at
// most (n <= 7 on 7x6), so that a mistyped n does not start a pass of
// millions of digests.
const MaxDigestSequences = 1 << 20

// digestProgressEvery is how many positions a digest hashes between
// progress calls and context checks.
const digestProgressEvery = 1 << 16

// DigestOptions tunes Digest and DigestSequences. A nil *DigestOptions is
// valid.
type DigestOptions struct {
	// TempDir is where the positions of a level that do not fit in
	// MemKeys are spilled, as sorted runs, while the next level is
	// enumerated. The default value is os.TempDir().
	TempDir string

	// MemKeys is the most keys of a level kept in memory (16 bytes each)
	// before a sorted run is spilled to TempDir. The default value is
	// DefaultDigestMemKeys.
	MemKeys int

	// Threads is the number of walks DigestSequences makes at once (the
	// root's, and a group's of up to 64 digests each), each reading the
	// book with a Reader of its own. The default value, 0, means 1.
	Threads int

	// Progress, if set, is called every so often with the number of
	// records hashed so far, by every digest of the call together, from
	// the goroutines that hash: it must be quick and safe for concurrent
	// use.
	Progress func(hashed int64)
}

// Digest is the digest of the positions under a root (see above).
type Digest struct {
	Sum       [sha256.Size]byte // SHA-256 of the records
	Positions int64             // records hashed
}

// String returns the sum in lower-case hexadecimal, 64 digits.
func (d Digest) String() string { return hex.EncodeToString(d.Sum[:]) }

// SequenceDigest is the digest of the positions under one sequence of
// moves from a root (DigestSequences).
type SequenceDigest struct {
	Moves string // the root's moves, then the sequence's
	Digest
}

// MissingError is a position of a digest's set that the book does not
// hold: the book is incomplete for the digest's root and depth. It wraps
// ErrNotInBook.
type MissingError struct {
	Depth int    // stones on the board
	Key   uint64 // canonical key
	// Moves is a game from the empty board reaching the position or its
	// mirror image: the first through the digest's root in the order of
	// the columns, or, for a position more moves below the root than a
	// path holds (22 on 7x6), solver's MoveString; "" if none was found.
	Moves string
}

func (e *MissingError) Error() string {
	moves := e.Moves
	if moves == "" {
		moves = "?"
	}
	return fmt.Sprintf("position %s (%d stones, key %#x) is not in the book", solver.FormatMoves(moves), e.Depth, e.Key)
}

// Unwrap returns ErrNotInBook.
func (e *MissingError) Unwrap() error { return ErrNotInBook }

// Digest returns the digest of the positions under root (a move string;
// "" or solver.EmptyMoves is the empty board) with at most depth stones,
// with their scores in b (see above). The root must be a position whose
// game is not over, and depth between its stones and the board's cells.
// A position of the set that b does not hold ends it with a *MissingError
// naming the first one in the digest's order.
//
// The positions are enumerated one depth at a time, each from the one
// before, sorted and deduplicated with at most opts.MemKeys keys in memory
// (the rest in sorted runs in opts.TempDir), and looked up in b in key
// order through one Reader: memory does not grow with the set, and the
// reads are those of a scan of the set's entries.
func (b *Book) Digest(ctx context.Context, root string, depth int, opts *DigestOptions) (Digest, error) {
	o, r, err := b.digestSetup(root, depth, opts)
	if err != nil {
		return Digest{}, err
	}
	dg, err := b.newDigester(o, new(atomic.Int64))
	if err != nil {
		return Digest{}, err
	}
	defer dg.close()
	return dg.digest(ctx, root, r, depth)
}

// digestSetup checks the arguments of a digest and returns its options,
// defaults filled in, and the root's position.
func (b *Book) digestSetup(root string, depth int, opts *DigestOptions) (DigestOptions, solver.Position, error) {
	var o DigestOptions
	if opts != nil {
		o = *opts
	}
	if o.MemKeys <= 0 {
		o.MemKeys = DefaultDigestMemKeys
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if err := b.check(false); err != nil {
		return o, solver.Position{}, err
	}
	r, err := b.board.Parse(root)
	if err != nil {
		return o, solver.Position{}, fmt.Errorf("digest root: %w", err)
	}
	if r.Over() {
		return o, solver.Position{}, fmt.Errorf("digest root %q: a finished game is not in a book", root)
	}
	if depth < r.Moves() || depth > b.board.Cells() {
		return o, solver.Position{}, fmt.Errorf("digest depth %d: must be between the root's %d stones and %d", depth, r.Moves(), b.board.Cells())
	}
	return o, r, nil
}

// digester computes digests, one after the other, with a Reader of the
// book and a walker of the sets.
type digester struct {
	walker   *setWalker
	book     *Reader
	progress func(int64)
	hashed   *atomic.Int64 // records hashed by every digester of the call

	// One digest's.
	h     hash.Hash
	buf   []byte // records not hashed yet
	count int64
}

// newDigester returns a digester of b. Close it when done.
func (b *Book) newDigester(o DigestOptions, hashed *atomic.Int64) (*digester, error) {
	rd, err := b.NewReader()
	if err != nil {
		return nil, err
	}
	w, err := newSetWalker(b.board, o.TempDir, o.MemKeys)
	if err != nil {
		rd.Close()
		return nil, err
	}
	return &digester{
		walker: w, book: rd, progress: o.Progress, hashed: hashed,
		h: sha256.New(), buf: make([]byte, 0, digestProgressEvery*digestRecordLen),
	}, nil
}

// close releases the digester's reader and walker.
func (dg *digester) close() {
	dg.walker.close()
	dg.book.Close()
}

// digest computes the digest of root (moves, and its position r) to
// depth: it hashes the records of the set in its order.
func (dg *digester) digest(ctx context.Context, moves string, r solver.Position, depth int) (Digest, error) {
	dg.count, dg.buf = 0, dg.buf[:0]
	dg.h.Reset()
	err := dg.walker.walk(moves, r, depth, func(d int, key, path uint64) error {
		v, ok, err := dg.book.GetEntry(d, key)
		if err != nil {
			return err
		}
		if !ok {
			return dg.walker.missing(d, key, path)
		}
		dg.add(key, v.Score)
		if dg.count%digestProgressEvery == 0 {
			return dg.flush(ctx)
		}
		return nil
	})
	if err != nil {
		return Digest{}, err
	}
	if err := dg.flush(ctx); err != nil {
		return Digest{}, err
	}
	var d Digest
	dg.h.Sum(d.Sum[:0])
	d.Positions = dg.count
	return d, nil
}

// setWalker enumerates the set of a root and a depth (see # Digests) in
// its order: one level at a time, each from the one before, sorted and
// deduplicated by two sorters (the level being read and the next), with
// at most their MemKeys pairs in memory and the rest in sorted runs in a
// directory of its own. The sorters are kept from one walk to the next (a
// sorter's buffer is MemKeys pairs, allocated whole).
//
// Each position of a level carries, beside its key, the first game from
// the root that reaches it (or its mirror image), only to name it if a
// book lacks it: a path, the columns played from the root as the digits
// of a number in base Width, shifted left by one, with the low bit set
// when the game reaches the mirror image of the canonical position. The
// sorter orders a key's pairs by path, so its first pair has the first
// game in the order of the columns. A game longer than pathMoves moves
// does not fit: its path is 0, and a missing position is then named by
// solver's MoveString.
type setWalker struct {
	board     *solver.Board
	dir       string
	cur, next *keyfile.Sorter
	pathMoves int // most moves from the root a path holds

	// One walk's.
	root      solver.Position
	rootMoves string
}

// newSetWalker returns a walker of sets of board, whose sorters spill
// their runs in a new directory of tempDir. Close it when done.
func newSetWalker(board *solver.Board, tempDir string, memKeys int) (*setWalker, error) {
	dir, err := os.MkdirTemp(tempDir, "c4book-set-")
	if err != nil {
		return nil, err
	}
	return &setWalker{board: board, dir: dir,
		cur: keyfile.NewFirstSorter(dir, memKeys), next: keyfile.NewFirstSorter(dir, memKeys),
		pathMoves: maxPathMoves(board.Width())}, nil
}

// close releases the walker's sorters and removes its directory.
func (w *setWalker) close() {
	w.cur.Close()
	w.next.Close()
	os.RemoveAll(w.dir)
}

// maxPathMoves returns the most moves whose path, in base width and
// shifted left by one, fits a uint64.
func maxPathMoves(width int) int {
	n := 0
	for v := uint64(1); v <= math.MaxUint64/2/uint64(width); v *= uint64(width) {
		n++
	}
	return n
}

// walk calls visit with each position of the set of root (moves, and its
// position r) to depth, in the set's order: its stones, canonical key and
// path. An error of visit ends the walk and is returned as it is.
func (w *setWalker) walk(moves string, r solver.Position, depth int, visit func(d int, key, path uint64) error) error {
	if moves == solver.EmptyMoves {
		moves = ""
	}
	w.root, w.rootMoves = r, moves
	defer w.cur.Close() // empty after a merge; not after an error
	defer w.next.Close()
	width := uint64(w.board.Width())
	if err := w.cur.Add(r.CanonicalKey(), w.pathOf(0, false, r)); err != nil {
		return err
	}
	for d := r.Moves(); d <= depth; d++ {
		more := d < depth
		grow := d+1-r.Moves() <= w.pathMoves
		last, started := uint64(0), false
		err := w.cur.Merge(func(key, path uint64) error {
			if started && key == last {
				return nil // reached by a later game too
			}
			last, started = key, true
			if err := visit(d, key, path); err != nil {
				return err
			}
			if !more {
				return nil
			}
			p, err := w.board.PositionFromKey(key)
			if err != nil {
				return err
			}
			mirrored := path&1 != 0
			for col, child := range p.Children() {
				if child.LastMoveWon() {
					continue // terminal: not a book position
				}
				// The game plays col on p, or the mirror column on p's
				// mirror image, which the path reaches.
				var childPath uint64
				if grow {
					played := uint64(col)
					if mirrored {
						played = width - 1 - played
					}
					childPath = (path>>1*width + played) << 1
				}
				if err := w.next.Add(child.CanonicalKey(), w.pathOf(childPath, mirrored, child)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		w.cur, w.next = w.next, w.cur
	}
	return nil
}

// pathOf returns the path value of p, reached by the game of path (whose
// low bit is clear) or, if mirrored, p's mirror image: the low bit set when
// the game reaches the mirror image of p's canonical position.
func (w *setWalker) pathOf(path uint64, mirrored bool, p solver.Position) uint64 {
	if mirrored != (p.Key() != p.CanonicalKey()) {
		path |= 1
	}
	return path
}

// add appends the record of a position to the buffer.
func (dg *digester) add(key uint64, score int) {
	dg.buf = binary.BigEndian.AppendUint64(dg.buf, key)
	dg.buf = append(dg.buf, byte(int8(score)))
	dg.count++
}

// flush hashes the buffered records, reports progress and checks ctx.
func (dg *digester) flush(ctx context.Context) error {
	dg.h.Write(dg.buf)
	n := int64(len(dg.buf) / digestRecordLen)
	dg.buf = dg.buf[:0]
	total := dg.hashed.Add(n)
	if dg.progress != nil {
		dg.progress(total)
	}
	return ctx.Err()
}

// missing returns the error of the position of depth stones and key key,
// reached from the walk's root by path, which a book lacks.
func (w *setWalker) missing(depth int, key, path uint64) error {
	e := &MissingError{Depth: depth, Key: key}
	n := depth - w.root.Moves()
	if n <= w.pathMoves {
		cols := make([]byte, n)
		width := uint64(w.board.Width())
		for i, v := n-1, path>>1; i >= 0; i, v = i-1, v/width {
			cols[i] = byte('1' + v%width)
		}
		e.Moves = w.rootMoves + string(cols)
		return e
	}
	return missingAt(w.board, depth, key)
}

// missingAt returns the error of the position of depth stones and key
// key, which a book lacks, named by solver's MoveString: a walk that
// keeps no path to it.
func missingAt(board *solver.Board, depth int, key uint64) error {
	e := &MissingError{Depth: depth, Key: key}
	if p, err := board.PositionFromKey(key); err == nil {
		e.Moves, _ = p.MoveString()
	}
	return e
}
