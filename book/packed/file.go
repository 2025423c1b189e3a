package packed

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync/atomic"

	"github.com/c4book/c4book/internal/fuse"
	"github.com/c4book/c4book/solver"
)

// File is an open packed book, read in place: the file is mapped into
// memory, so opening it reads its header only, and a lookup touches a few
// of its pages. Each block of the data is checked against its checksum the
// first time a lookup reads it, so a damaged block is an error
// (ErrDamaged), never a score. A File is safe for concurrent use.
type File struct {
	path     string
	mapped   []byte // the whole file
	unmap    func() error
	data     []byte // the data, after the header
	h        *header
	root     solver.Position
	rootSym  bool              // the root is its own mirror image
	layers   [][][]fuse.Params // params of each layer of each bucket of each level
	verified []atomic.Uint64   // a bit a block: its checksum was found right
	closed   atomic.Bool
}

// Open opens the packed book at path. A file that is not a packed book
// is ErrNotPacked; one of a later format, ErrNewerFormat; one damaged or
// cut short (a header that fails its checksum, a size that is not the
// header's), a *DamagedError.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("packed book %s: %w: a directory", path, ErrNotPacked)
	}
	prefix := make([]byte, prefixLen)
	n, err := io.ReadFull(fh, prefix)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	headerLen, dataLen, err := headerPrefix(prefix[:n])
	if err != nil {
		return nil, wrapOpen(path, err)
	}
	if want := uint64(headerLen) + dataLen; uint64(st.Size()) != want {
		what := "cut short"
		if uint64(st.Size()) > want {
			what = "longer than its header says"
		}
		return nil, &DamagedError{Path: path, Offset: min(st.Size(), int64(want)),
			Reason: fmt.Sprintf("%s: %d bytes, the header says %d (%d of header, %d of data)", what, st.Size(), want, headerLen, dataLen)}
	}
	mapped, unmap, err := mapFile(fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("packed book %s: %w", path, err)
	}
	f, err := newFile(path, mapped, unmap)
	if err != nil {
		unmap()
		return nil, err
	}
	return f, nil
}

// OpenBytes returns the packed book held in data (a file read whole, or
// embedded in a program), as Open does a file's: data must not change
// while the File is used.
func OpenBytes(name string, data []byte) (*File, error) {
	headerLen, dataLen, err := headerPrefix(data[:min(len(data), prefixLen)])
	if err != nil {
		return nil, wrapOpen(name, err)
	}
	if want := uint64(headerLen) + dataLen; uint64(len(data)) != want {
		return nil, &DamagedError{Path: name, Offset: min(int64(len(data)), int64(want)),
			Reason: fmt.Sprintf("%d bytes, the header says %d", len(data), want)}
	}
	return newFile(name, data, func() error { return nil })
}

// wrapOpen names the file in an error of its prefix.
func wrapOpen(path string, err error) error {
	if errors.Is(err, ErrDamaged) {
		return &DamagedError{Path: path, Offset: 0, Reason: err.Error()}
	}
	return fmt.Errorf("packed book %s: %w", path, err)
}

// newFile parses the header of a whole file in memory.
func newFile(path string, mapped []byte, unmap func() error) (*File, error) {
	headerLen, _, _ := headerPrefix(mapped)
	h, err := decodeHeader(mapped[:headerLen])
	if err != nil {
		if errors.Is(err, ErrNewerFormat) {
			return nil, fmt.Errorf("packed book %s: %w", path, err)
		}
		return nil, &DamagedError{Path: path, Offset: 0, Reason: "header: " + err.Error()}
	}
	f := &File{path: path, mapped: mapped, unmap: unmap, data: mapped[headerLen:], h: h}
	f.root, _ = h.board.Parse(h.root)
	f.rootSym = f.root.Key() == f.root.MirrorKey()
	f.layers = make([][][]fuse.Params, len(h.levels))
	for i := range h.levels {
		lv := &h.levels[i]
		f.layers[i] = make([][]fuse.Params, len(lv.buckets))
		for b, layers := range lv.buckets {
			for _, l := range layers {
				f.layers[i][b] = append(f.layers[i][b], l.params())
			}
		}
	}
	f.verified = make([]atomic.Uint64, (len(h.blocks)+63)/64)
	return f, nil
}

// Close releases the file. Lookups after Close fail.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return errors.New("packed book already closed")
	}
	return f.unmap()
}

// Path returns the path the file was opened from.
func (f *File) Path() string { return f.path }

// Board returns the board of the positions.
func (f *File) Board() *solver.Board { return f.h.board }

// Root returns the root's move string, "" for the empty board.
func (f *File) Root() string { return f.h.root }

// RootStones returns the stones of the root: the shallowest level.
func (f *File) RootStones() int { return f.root.Moves() }

// Depth returns the most stones of a position of the set.
func (f *File) Depth() int { return f.h.depth }

// Positions returns the number of positions of the set.
func (f *File) Positions() uint64 { return f.h.positions }

// Digest returns the digest of the set's positions and scores that the
// header records (book/digest.go): what the book the file was made from
// gave. Recomputing it from the file's lookups checks the file.
func (f *File) Digest() [32]byte { return f.h.digest }

// Size returns the size of the file in bytes.
func (f *File) Size() int64 { return int64(len(f.mapped)) }

// Levels returns what each level holds.
func (f *File) Levels() []LevelStats {
	out := make([]LevelStats, len(f.h.levels))
	for i := range f.h.levels {
		lv := &f.h.levels[i]
		var n uint64
		for _, params := range f.layers[i] {
			for _, p := range params {
				n += p.Bytes()
			}
		}
		out[i] = LevelStats{Stones: f.root.Moves() + i, Positions: lv.positions, WinNow: lv.winNow,
			LoseNext: lv.loseNext, Stored: lv.stored, Scheme: int(lv.scheme), Bytes: n}
	}
	return out
}

// Contains reports whether p is a position of the set: of the file's
// board, with no more stones than its depth, reachable from its root (or
// its mirror image is) by legal play, and not a game whose last move made
// four. Membership is computed, not stored: the file holds no positions.
func (f *File) Contains(p *solver.Position) bool {
	if !p.Board().Equal(f.h.board) {
		return false
	}
	return f.member(p)
}

// member is Contains for a position of the board.
func (f *File) member(p *solver.Position) bool {
	if p.Moves() < f.root.Moves() || p.Moves() > f.h.depth || p.Moves() > 0 && p.LastMoveWon() {
		return false
	}
	if p.ReachableFrom(f.root) {
		return true
	}
	if f.rootSym {
		return false // a mirror image is reached as p is, or not
	}
	m := p.Mirror()
	return m.ReachableFrom(f.root)
}

// member reports whether p is in the set of root and depth (File.member,
// for the builder).
func member(p, root *solver.Position, depth int) bool {
	f := File{h: &header{depth: depth}, root: *root, rootSym: root.Key() == root.MirrorKey()}
	return f.member(p)
}

// Get returns the exact score of p, and true, if p is a position of the
// set; 0 and false if it is not. A position of another board is not of the
// set. The error is a *DamagedError when a block read fails its checksum
// or a code read is not one of the file's.
func (f *File) Get(p *solver.Position) (int, bool, error) {
	if f.closed.Load() {
		return 0, false, errors.New("packed book is closed")
	}
	if !f.Contains(p) {
		return 0, false, nil
	}
	k, score := classify(p)
	if k != kindStored {
		return score, true, nil
	}
	i := p.Moves() - f.root.Moves()
	lv := &f.h.levels[i]
	lo, _ := f.h.board.ScoreRange(p.Moves())
	ctx := contextOf(lv.scheme, p)
	c := &lv.codes[ctx]
	if c.only >= 0 {
		return lo + c.only, true, nil
	}
	key := p.CanonicalKey()
	bucket := bucketIndex(key, len(lv.buckets))
	var value uint32
	for j, params := range f.layers[i][bucket] {
		bit, err := f.bit(lv.buckets[bucket][j].offset, params, key)
		if err != nil {
			return 0, false, err
		}
		value = value<<1 | uint32(bit)
		if s, ok := c.decodeStep(value, j+1); ok {
			return lo + s, true, nil
		}
	}
	return 0, false, &DamagedError{Path: f.path, Offset: int64(len(f.mapped) - len(f.data)),
		Reason: fmt.Sprintf("position %v (%d stones, key %#x): the bits %0*b of its bucket's %d layers are no code of its context %d",
			moveString(p), p.Moves(), key, len(lv.buckets[bucket]), value, len(lv.buckets[bucket]), ctx)}
}

// GetKey returns the exact score of the position of stones stones and
// canonical key key, as Get does. A key that is not the canonical key of a
// position of stones stones is not of the set.
func (f *File) GetKey(stones int, key uint64) (int, bool, error) {
	if stones < f.root.Moves() || stones > f.h.depth {
		return 0, false, nil
	}
	p, err := f.h.board.PositionFromKey(key)
	if err != nil || p.Moves() != stones || p.CanonicalKey() != key {
		return 0, false, nil
	}
	return f.Get(&p)
}

// bit returns the bit of key in the fuse array at offset of the data.
func (f *File) bit(offset uint64, p fuse.Params, key uint64) (uint8, error) {
	p0, p1, p2 := p.Positions(key)
	var v uint8
	for _, pos := range [3]uint64{p0, p1, p2} {
		at := offset + pos>>3
		if err := f.check(at); err != nil {
			return 0, err
		}
		v ^= f.data[at] >> (pos & 7)
	}
	return v & 1, nil
}

// check makes sure the block holding byte at of the data was found right.
func (f *File) check(at uint64) error {
	blk := at >> blockBits
	word, bit := &f.verified[blk/64], uint64(1)<<(blk%64)
	if word.Load()&bit != 0 {
		return nil
	}
	return f.checkBlock(blk)
}

// checkBlock checks block blk against its checksum, and remembers it if
// it is right.
func (f *File) checkBlock(blk uint64) error {
	start := blk << blockBits
	end := min(start+1<<blockBits, uint64(len(f.data)))
	if got := crc32.Checksum(f.data[start:end], crcTable); got != f.h.blocks[blk] {
		return &DamagedError{Path: f.path, Offset: int64(len(f.mapped)-len(f.data)) + int64(start),
			Reason: fmt.Sprintf("block %d of the data (bytes %d to %d of the file) fails its checksum: %08x, want %08x",
				blk, len(f.mapped)-len(f.data)+int(start), len(f.mapped)-len(f.data)+int(end), got, f.h.blocks[blk])}
	}
	f.verified[blk/64].Or(uint64(1) << (blk % 64))
	return nil
}

// Check reads every block of the data and checks it against its checksum:
// what `c4book book verify` does first. It returns the first damaged one.
func (f *File) Check() error {
	for blk := range uint64(len(f.h.blocks)) {
		if err := f.checkBlock(blk); err != nil {
			return err
		}
	}
	return nil
}
