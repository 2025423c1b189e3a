package book

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"

	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

// # Digests of sequences
//
// The digests of the positions n moves below a root (DigestSequences,
// `book digest --by-root`) are not computed one walk each: a position of
// depth 16 is under some 20 of the 4-stone positions, so walks of their
// sets, one after the other, would enumerate, sort and look it up some 20
// times. Instead the positions are taken in groups of at most 64, and one
// walk of a group enumerates the union of their sets, each position once,
// with a word of 64 bits: bit i set when the group's i-th position reaches
// it. The bits of a position are the OR of its parents' (an OR sorter
// gathers them while the next level is enumerated), its score is read
// once, and its record goes to the digest of each bit set. A digest's
// records are still hashed in its own order, stones then key: the walk
// goes a level at a time in key order. Consecutive positions of the
// sequences' order share their first moves, and so most of their sets:
// a group's walk is little more than the walk of one of them.

// groupRoots is the most positions of one group walk: the bits of a
// sorter's value.
const groupRoots = 64

// groupRecords is how many records a group walk buffers for each
// position's digest before hashing them.
const groupRecords = 1 << 10

// DigestSequences returns the digest of root (Digest), and the digest of
// each sequence of n moves from root that can be played and leaves a game
// not over, in the order of the sequences (columns 1..width,
// lexicographic): the digest of the position it reaches with at most
// depth stones, which is what Digest of the root's moves followed by the
// sequence's gives. A sequence that cannot be played (a full column, a
// game over before its end) is left out, and so is one whose last move
// ends the game, which is not a root.
//
// Sequences that reach one position, or mirror images, share one digest.
// The digests of the positions are computed in groups of up to 64, one
// walk of the union of their sets each (see # Digests of sequences), and
// the root's walk beside them, opts.Threads walks at a time. A position
// the book lacks ends the call with a *MissingError: the root's (see
// Digest) unless a group's walk met a missing position first.
func (b *Book) DigestSequences(ctx context.Context, root string, depth, n int, opts *DigestOptions) (Digest, []SequenceDigest, error) {
	o, r, err := b.digestSetup(root, depth, opts)
	if err != nil {
		return Digest{}, nil, err
	}
	if n < 1 || r.Moves()+n > depth {
		return Digest{}, nil, fmt.Errorf("digest: sequences of %d moves from a root of %d stones: want 1 to %d (the depth, %d, less the root's stones)",
			n, r.Moves(), depth-r.Moves(), depth)
	}
	if seqs := math.Pow(float64(b.board.Width()), float64(n)); seqs > MaxDigestSequences {
		return Digest{}, nil, fmt.Errorf("digest: sequences of %d moves: up to %.0f on a board of %d columns, more than %d", n, seqs, b.board.Width(), MaxDigestSequences)
	}
	// The sequences, and the distinct positions they reach.
	var seqs []SequenceDigest
	index := map[uint64]int{} // canonical key -> index in subs
	var subs []solver.Position
	var at []int // for each sequence, its position's index in subs
	moves := []byte(root)
	if root == solver.EmptyMoves {
		moves = moves[:0]
	}
	var walk func(p solver.Position, left int)
	walk = func(p solver.Position, left int) {
		for col, child := range p.Children() {
			moves = append(moves, byte('1'+col))
			switch {
			case child.Over():
			case left > 1:
				walk(child, left-1)
			default:
				k := child.CanonicalKey()
				i, ok := index[k]
				if !ok {
					i = len(subs)
					index[k] = i
					subs = append(subs, child)
				}
				at = append(at, i)
				seqs = append(seqs, SequenceDigest{Moves: string(moves)})
			}
			moves = moves[:len(moves)-1]
		}
	}
	walk(r, n)

	// The root's digest, then the groups' digests, taken in turn by
	// o.Threads goroutines, each with a digester and a group walker of
	// its own.
	var whole Digest
	digests := make([]Digest, len(subs))
	groups := digestGroups(len(subs), max(o.Threads, 1))
	hashed := new(atomic.Int64)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wholeErr error
	)
	fail := func(err error) { errOnce.Do(func() { firstErr = err; cancel() }) }
	for range min(max(o.Threads, 1), 1+len(groups)) {
		wg.Go(func() {
			var gw *groupWalker
			defer func() {
				if gw != nil {
					gw.close()
				}
			}()
			for {
				job := int(next.Add(1) - 1)
				switch {
				case job > len(groups):
					return
				case job == 0:
					dg, err := b.newDigester(o, hashed)
					if err == nil {
						whole, err = dg.digest(ctx, root, r, depth)
						dg.close()
					}
					if err != nil {
						wholeErr = err
						fail(err)
						return
					}
					continue
				case gw == nil:
					var err error
					if gw, err = b.newGroupWalker(o, hashed); err != nil {
						fail(err)
						return
					}
				}
				lo, hi := groups[job-1][0], groups[job-1][1]
				if err := gw.digests(ctx, subs[lo:hi], depth, digests[lo:hi]); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if wholeErr != nil && !errors.Is(wholeErr, context.Canceled) {
		return Digest{}, nil, wholeErr // the root's walk names a missing position by its path
	}
	if firstErr != nil {
		return Digest{}, nil, firstErr
	}
	for j := range seqs {
		seqs[j].Digest = digests[at[j]]
	}
	return whole, seqs, nil
}

// digestGroups cuts n positions, in order, into groups of at most
// groupRoots consecutive ones, of sizes within one of each other: as few
// as that allows, but at least one for each of threads (while there are
// positions), and a multiple of threads when that takes no group of fewer
// than a half of groupRoots, so that the threads finish together. It
// returns each group's [lo, hi).
func digestGroups(n, threads int) [][2]int {
	if n == 0 {
		return nil
	}
	k := (n + groupRoots - 1) / groupRoots
	k = max(k, min(threads, n))
	if r := k % threads; r != 0 && n/(k+threads-r) >= groupRoots/2 {
		k += threads - r
	}
	groups := make([][2]int, k)
	for g := range groups {
		groups[g] = [2]int{g * n / k, (g + 1) * n / k}
	}
	return groups
}

// groupWalker computes the digests of groups of positions, one walk of a
// group's sets each (see # Digests of sequences), with a Reader of the
// book and two OR sorters kept from one group to the next.
type groupWalker struct {
	board     *solver.Board
	dir       string
	cur, next *keyfile.Sorter
	book      *Reader
	progress  func(int64)
	hashed    *atomic.Int64 // records hashed by every digester of the call

	// One group's: for each position, its hash, its records not hashed
	// yet, and their number.
	hashes []hash.Hash
	bufs   [][]byte
	counts []int64
}

// newGroupWalker returns a group walker of b. Close it when done.
func (b *Book) newGroupWalker(o DigestOptions, hashed *atomic.Int64) (*groupWalker, error) {
	rd, err := b.NewReader()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(o.TempDir, "c4book-set-")
	if err != nil {
		rd.Close()
		return nil, err
	}
	gw := &groupWalker{board: b.board, dir: dir, book: rd, progress: o.Progress, hashed: hashed,
		cur: keyfile.NewOrSorter(dir, o.MemKeys), next: keyfile.NewOrSorter(dir, o.MemKeys)}
	for range groupRoots {
		gw.hashes = append(gw.hashes, sha256.New())
		gw.bufs = append(gw.bufs, make([]byte, 0, groupRecords*digestRecordLen))
	}
	gw.counts = make([]int64, groupRoots)
	return gw, nil
}

// close releases the walker's reader and sorters and removes its
// directory.
func (gw *groupWalker) close() {
	gw.cur.Close()
	gw.next.Close()
	os.RemoveAll(gw.dir)
	gw.book.Close()
}

// digests sets out[i] to the digest of roots[i] to depth, for the at most
// groupRoots roots, all of one number of stones, in one walk of the union
// of their sets.
func (gw *groupWalker) digests(ctx context.Context, roots []solver.Position, depth int, out []Digest) error {
	if len(roots) == 0 {
		return nil
	}
	defer gw.cur.Close() // empty after a merge; not after an error
	defer gw.next.Close()
	for i, p := range roots {
		gw.hashes[i].Reset()
		gw.bufs[i] = gw.bufs[i][:0]
		gw.counts[i] = 0
		if err := gw.cur.Add(p.CanonicalKey(), 1<<i); err != nil {
			return err
		}
	}
	var unreported int64 // records hashed, not yet added to gw.hashed
	for d := roots[0].Moves(); d <= depth; d++ {
		more := d < depth
		err := gw.cur.Merge(func(key, under uint64) error {
			v, ok, err := gw.book.GetEntry(d, key)
			if err != nil {
				return err
			}
			if !ok {
				return missingAt(gw.board, d, key)
			}
			var rec [digestRecordLen]byte
			binary.BigEndian.PutUint64(rec[:8], key)
			rec[8] = byte(int8(v.Score))
			for b := under; b != 0; b &= b - 1 {
				i := bits.TrailingZeros64(b)
				gw.bufs[i] = append(gw.bufs[i], rec[:]...)
				gw.counts[i]++
				if len(gw.bufs[i]) == cap(gw.bufs[i]) {
					gw.hashes[i].Write(gw.bufs[i])
					gw.bufs[i] = gw.bufs[i][:0]
				}
			}
			if unreported += int64(bits.OnesCount64(under)); unreported >= digestProgressEvery {
				if err := gw.report(ctx, unreported); err != nil {
					return err
				}
				unreported = 0
			}
			if !more {
				return nil
			}
			p, err := gw.board.PositionFromKey(key)
			if err != nil {
				return err
			}
			for _, child := range p.Children() {
				if child.LastMoveWon() {
					continue // terminal: not a book position
				}
				if err := gw.next.Add(child.CanonicalKey(), under); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		gw.cur, gw.next = gw.next, gw.cur
	}
	if err := gw.report(ctx, unreported); err != nil {
		return err
	}
	for i := range roots {
		gw.hashes[i].Write(gw.bufs[i])
		gw.hashes[i].Sum(out[i].Sum[:0])
		out[i].Positions = gw.counts[i]
	}
	return nil
}

// report adds n records to the call's count, reports progress and checks
// ctx.
func (gw *groupWalker) report(ctx context.Context, n int64) error {
	total := gw.hashed.Add(n)
	if gw.progress != nil {
		gw.progress(total)
	}
	return ctx.Err()
}
