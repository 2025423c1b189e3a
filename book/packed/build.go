package packed

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"

	"github.com/c4book/c4book/internal/fuse"
	"github.com/c4book/c4book/internal/splitmix"
	"github.com/c4book/c4book/solver"
)

// Spec names the set of positions a packed book holds: every position
// reachable from Root by legal play with at most Depth stones, without the
// positions whose last move made four, one per canonical key (the set of
// `c4book generate --root R --depth D`, and of a book digest).
type Spec struct {
	Board *solver.Board
	Root  string // a move string; "" or solver.EmptyMoves for the empty board
	Depth int
}

// root returns the root's position after checking the spec.
func (s Spec) root() (solver.Position, error) {
	if s.Board == nil {
		return solver.Position{}, errors.New("packed: no board")
	}
	if s.Root == solver.EmptyMoves {
		s.Root = ""
	}
	r, err := s.Board.Parse(s.Root)
	if err != nil {
		return r, fmt.Errorf("packed: root: %w", err)
	}
	if r.Over() {
		return r, fmt.Errorf("packed: root %s: the game is over", s.Root)
	}
	if s.Depth < r.Moves() || s.Depth > s.Board.Cells() {
		return r, fmt.Errorf("packed: depth %d: must be between the root's %d stones and %d", s.Depth, r.Moves(), s.Board.Cells())
	}
	if len(s.Root) > 255 {
		return r, fmt.Errorf("packed: a root of %d moves", len(s.Root))
	}
	return r, nil
}

// LevelStats describes one level of a packed book: its positions of one
// number of stones.
type LevelStats struct {
	Stones    int
	Positions uint64 // positions of the set with Stones stones
	WinNow    uint64 // of them, scored by the rules: the player to move makes four now
	LoseNext  uint64 // of them, scored by the rules: the player to move cannot stop a four
	Stored    uint64 // the rest, whose scores are coded
	Scheme    int    // the context scheme of the level's codes
	Bytes     uint64 // bytes of the level's arrays in the data
}

// Builder makes a packed book from the positions of a set and their
// scores, given in the set's order: by stones, then by canonical key, as a
// book digest reads them. It checks each position and score as it comes,
// and computes the set's digest on the way. Make one with NewBuilder, Add
// every position, then WriteTo.
type Builder struct {
	root    solver.Position
	h       header
	sum     hash.Hash // the digest of the records added
	record  [9]byte
	stones  int // of the level being added
	lastKey uint64
	level   levelBuild
	data    []byte
	stats   []LevelStats
	done    bool
}

// levelBuild holds the stored positions of the level being added.
type levelBuild struct {
	keys    []uint64
	symbols []uint8
	threats []uint8 // the context of scheme 1
	counts  LevelStats
}

// NewBuilder returns a builder of the set of spec.
func NewBuilder(spec Spec) (*Builder, error) {
	r, err := spec.root()
	if err != nil {
		return nil, err
	}
	root := spec.Root
	if root == solver.EmptyMoves {
		root = ""
	}
	b := &Builder{root: r, sum: sha256.New(), stones: r.Moves(), lastKey: 0}
	b.h = header{board: spec.Board, depth: spec.Depth, root: root}
	b.level.counts.Stones = r.Moves()
	return b, nil
}

// Add adds the position of stones stones and canonical key key, with its
// exact score. Positions must come in the set's order, each once, and
// every position of the set must come: the builder checks the order, that
// each position is of the set and that a score the rules give is that
// score, but it cannot know that none was left out (the caller enumerates
// the set: book's digest does).
func (b *Builder) Add(stones int, key uint64, score int) error {
	if b.done {
		return errors.New("packed: Add after WriteTo")
	}
	switch {
	case stones < b.stones:
		return fmt.Errorf("packed: a position of %d stones after those of %d: out of order", stones, b.stones)
	case stones > b.h.depth:
		return fmt.Errorf("packed: a position of %d stones, deeper than the depth %d", stones, b.h.depth)
	case stones == b.stones && b.level.counts.Positions > 0 && key <= b.lastKey:
		return fmt.Errorf("packed: key %#x after %#x of %d stones: out of order", key, b.lastKey, stones)
	}
	for b.stones < stones {
		if err := b.finishLevel(); err != nil {
			return err
		}
	}
	p, err := b.h.board.PositionFromKey(key)
	if err != nil {
		return fmt.Errorf("packed: %w", err)
	}
	if p.Moves() != stones || p.CanonicalKey() != key {
		return fmt.Errorf("packed: key %#x is not the canonical key of a position of %d stones", key, stones)
	}
	if !member(&p, &b.root, b.h.depth) {
		return fmt.Errorf("packed: position %v (key %#x) is not in the set of root %q and depth %d", moveString(&p), key, b.h.root, b.h.depth)
	}
	lo, hi := b.h.board.ScoreRange(stones)
	if score < lo || score > hi {
		return fmt.Errorf("packed: position %v scores %d, outside [%d, %d]", moveString(&p), score, lo, hi)
	}
	k, ruled := classify(&p)
	lv := &b.level
	switch k {
	case kindWinNow:
		lv.counts.WinNow++
	case kindLoseNext:
		lv.counts.LoseNext++
	default:
		lv.counts.Stored++
		lv.keys = append(lv.keys, key)
		lv.symbols = append(lv.symbols, uint8(score-lo))
		lv.threats = append(lv.threats, uint8(contextOf(schemeThreats, &p)))
	}
	if k != kindStored && score != ruled {
		return fmt.Errorf("packed: position %v scores %d, but the rules give %d: the book is wrong", moveString(&p), score, ruled)
	}
	lv.counts.Positions++
	b.lastKey = key
	binary.BigEndian.PutUint64(b.record[:8], key)
	b.record[8] = byte(int8(score))
	b.sum.Write(b.record[:])
	return nil
}

// moveString names a position in messages: a game reaching it.
func moveString(p *solver.Position) string {
	if s, ok := p.MoveString(); ok {
		return solver.FormatMoves(s)
	}
	return p.String()
}

// finishLevel codes the level being added, builds its arrays and moves to
// the next.
func (b *Builder) finishLevel() error {
	lv := &b.level
	lo, hi := b.h.board.ScoreRange(b.stones)
	symbols := hi - lo + 1
	best := levelInfo{}
	bestBytes := uint64(1<<64 - 1)
	for _, scheme := range schemes {
		info, bytes := lv.code(scheme, symbols)
		if bytes < bestBytes {
			best, bestBytes = info, bytes
		}
	}
	best.positions, best.winNow, best.loseNext, best.stored = lv.counts.Positions, lv.counts.WinNow, lv.counts.LoseNext, lv.counts.Stored
	start := len(b.data)
	if err := b.buildBuckets(&best); err != nil {
		return err
	}
	b.h.levels = append(b.h.levels, best)
	b.h.positions += lv.counts.Positions
	st := lv.counts
	st.Scheme = int(best.scheme)
	st.Bytes = uint64(len(b.data) - start)
	b.stats = append(b.stats, st)
	b.stones++
	*lv = levelBuild{keys: lv.keys[:0], symbols: lv.symbols[:0], threats: lv.threats[:0]}
	lv.counts.Stones = b.stones
	return nil
}

// code returns the codes of the level in scheme, and an estimate of the
// bytes the level then takes: its codes in the header and its bits in
// fuse arrays (1.125 bits a bit coded).
func (lv *levelBuild) code(scheme uint8, symbols int) (levelInfo, uint64) {
	n, _ := schemeContexts(scheme)
	freq := make([][]uint64, n)
	for i := range freq {
		freq[i] = make([]uint64, symbols)
	}
	for i, s := range lv.symbols {
		freq[lv.context(scheme, i)][s]++
	}
	info := levelInfo{scheme: scheme, codes: make([]code, n)}
	var bitsCoded, headerBytes uint64
	for ctx, f := range freq {
		used, only := 0, 0
		for s, c := range f {
			if c > 0 {
				used++
				only = s
			}
		}
		switch used {
		case 0:
			info.codes[ctx] = code{lengths: make([]uint8, symbols), only: -1}
			headerBytes++
		case 1:
			info.codes[ctx] = singleCode(symbols, only)
			headerBytes += 2
		default:
			c, err := newCode(huffmanLengths(f, maxCodeLen))
			if err != nil {
				panic(err) // huffmanLengths makes complete codes
			}
			info.codes[ctx] = c
			headerBytes += 1 + uint64(symbols+1)/2
			for s, k := range f {
				bitsCoded += k * uint64(c.lengths[s])
			}
		}
	}
	return info, headerBytes + bitsCoded*9/64
}

// context returns the context of stored position i in scheme.
func (lv *levelBuild) context(scheme uint8, i int) int {
	if scheme == schemeOne {
		return 0
	}
	return int(lv.threats[i])
}

// buildBuckets splits the level's stored positions into buckets and
// builds the fuse array of each layer of each, appending them to the data.
func (b *Builder) buildBuckets(info *levelInfo) error {
	lv := &b.level
	n := len(lv.keys)
	nBuckets := max(1, (n+bucketKeys-1)/bucketKeys)
	info.buckets = make([][]layerInfo, nBuckets)
	// The positions of each bucket, in key order: a counting sort.
	bucketOf := make([]uint32, n)
	starts := make([]int, nBuckets+1)
	for i, k := range lv.keys {
		bk := bucketIndex(k, nBuckets)
		bucketOf[i] = uint32(bk)
		starts[bk+1]++
	}
	for i := range nBuckets {
		starts[i+1] += starts[i]
	}
	order := make([]int32, n)
	fill := append([]int(nil), starts...)
	for i := range lv.keys {
		bk := bucketOf[i]
		order[fill[bk]] = int32(i)
		fill[bk]++
	}
	var keys []uint64
	var codeBits []uint32
	var lengths []uint8
	for bk := range nBuckets {
		members := order[starts[bk]:starts[bk+1]]
		maxLen := 0
		for _, i := range members {
			c := &info.codes[lv.context(info.scheme, int(i))]
			maxLen = max(maxLen, c.length(int(lv.symbols[i])))
		}
		layers := make([]layerInfo, 0, maxLen)
		for j := range maxLen {
			keys, codeBits, lengths = keys[:0], codeBits[:0], lengths[:0]
			for _, i := range members {
				c := &info.codes[lv.context(info.scheme, int(i))]
				s := int(lv.symbols[i])
				if l := c.length(s); l > j {
					keys = append(keys, lv.keys[i])
					codeBits = append(codeBits, c.codes[s])
					lengths = append(lengths, uint8(l))
				}
			}
			seed := splitmix.Mix(uint64(b.stones)<<40 | uint64(bk)<<8 | uint64(j))
			p, array, err := fuse.Build(keys, func(k int) uint8 {
				return uint8(codeBits[k] >> (int(lengths[k]) - 1 - j) & 1)
			}, seed)
			if err != nil {
				return fmt.Errorf("packed: level %d, bucket %d, layer %d: %w", b.stones, bk, j, err)
			}
			layers = append(layers, layerInfo{keys: uint32(len(keys)), seed: p.Seed, segmentBits: p.SegmentBits,
				segmentCount: p.SegmentCount, offset: uint64(len(b.data))})
			b.data = append(b.data, array...)
		}
		info.buckets[bk] = layers
	}
	return nil
}

// bucketIndex returns the bucket of key among n.
func bucketIndex(key uint64, n int) int {
	hi, _ := bits.Mul64(splitmix.Mix(key^bucketSalt), uint64(n))
	return int(hi)
}

// params returns the fuse params of the layer.
func (l *layerInfo) params() fuse.Params {
	return fuse.Params{Seed: l.seed, SegmentBits: l.segmentBits, SegmentCount: l.segmentCount}
}

// Digest returns the book digest of the positions added so far: once every
// position of the set is added, the set's digest (book/digest.go).
func (b *Builder) Digest() [32]byte {
	var d [32]byte
	b.sum.Sum(d[:0])
	return d
}

// Stats returns the levels built so far (all of them after WriteTo).
func (b *Builder) Stats() []LevelStats { return b.stats }

// WriteTo finishes the levels, and writes the packed book to w. Nothing
// can be added after it.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	if !b.done {
		for b.stones <= b.h.depth {
			if err := b.finishLevel(); err != nil {
				return 0, err
			}
		}
		b.done = true
		b.h.digest = b.Digest()
		b.h.dataLen = uint64(len(b.data))
		b.h.blocks = blockChecksums(b.data)
	}
	head := b.h.encode()
	n, err := w.Write(head)
	if err != nil {
		return int64(n), err
	}
	m, err := w.Write(b.data)
	return int64(n + m), err
}

// blockChecksums returns the CRC-32C of each block of data.
func blockChecksums(data []byte) []uint32 {
	sums := make([]uint32, 0, (len(data)+1<<blockBits-1)>>blockBits)
	for off := 0; off < len(data); off += 1 << blockBits {
		sums = append(sums, crc32.Checksum(data[off:min(off+1<<blockBits, len(data))], crcTable))
	}
	return sums
}
