package bookfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/bits"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// # Pascal Pons' .book format
//
// The opening book file of Pons' connect4 solver, as its OpeningBook.hpp
// loads it (with TranspositionTable.hpp and Position.hpp of the same
// repository). A header of six bytes, then a hash table of size slots:
//
//	 byte 0    1        2       3           4             5
//	+-------+--------+-------+-----------+-------------+----------+
//	| width | height | depth | key bytes | value bytes | log2size |
//	+-------+--------+-------+-----------+-------------+----------+
//	| partial key of slot 0, 1, ..., size-1: key bytes each,      |
//	| little-endian                                               |
//	+-------------------------------------------------------------+
//	| value of slot 0, 1, ..., size-1: one byte each              |
//	+-------------------------------------------------------------+
//
//	width, height: the board; his loader accepts only the size it was
//	               compiled for (7x6).
//	depth:         positions with more stones are never looked up; at most
//	               width*height.
//	key bytes:     bytes of a partial key: 1, 2 or 4 (the sizes his loader
//	               instantiates; his comments say "bits", his code writes
//	               bytes).
//	value bytes:   1.
//	log2size:      21..27 (the sizes his loader instantiates); the table has
//	               size = the smallest prime above 2^log2size slots.
//
// A position's slot is key3 % size, where key3 is his base-3 key of the
// position (see ponsKey3), the same for a position and its mirror image.
// The slot holds key3 truncated to its low key-bytes bytes and the value
// score - MIN_SCORE + 1, where MIN_SCORE = -(width*height)/2 + 3; value 0
// is an empty slot. A lookup finds a position if the slot's partial key
// matches.
//
// What the format cannot hold. It is a lossy hash table: two positions of
// one slot cannot both be stored (ExportPons keeps the shallower, which
// saves the solver the larger search, and reports the other lost); scores
// outside [MIN_SCORE, MAX_SCORE], MAX_SCORE = (width*height+1)/2 - 3, have
// no value (on boards with an odd number of cells a loss to the opponent's
// fourth stone is below MIN_SCORE); the origin of a score is not kept; and
// books deeper than the partial keys can tell apart are refused (see
// ponsKeyBytes). Slots are at most 2^27+: the largest books lose many
// positions to collisions.

// Limits of Pons' loader; see the format above.
const (
	ponsHeaderLen  = 6
	ponsValueBytes = 1
	ponsMinLog     = 21
	ponsMaxLog     = 27
)

// DefaultPonsLoad is the default PonsOptions.MaxLoad.
const DefaultPonsLoad = 0.5

// ponsMinScore and ponsMaxScore are Position::MIN_SCORE and MAX_SCORE of
// Pons' solver on board b: the scores his book can store.
func ponsMinScore(b *solver.Board) int { return -b.Cells()/2 + 3 }
func ponsMaxScore(b *solver.Board) int { return (b.Cells()+1)/2 - 3 }

// toPonsValue converts a score to a value of Pons' book, 0 if the score
// cannot be stored; fromPonsValue is its inverse for values above 0.
func toPonsValue(b *solver.Board, score int) byte {
	if score < ponsMinScore(b) || score > ponsMaxScore(b) {
		return 0
	}
	return byte(score - ponsMinScore(b) + 1)
}

func fromPonsValue(b *solver.Board, v byte) int { return int(v) + ponsMinScore(b) - 1 }

// ponsKey3 returns Pons' base-3 key (Position::key3) of the position whose
// key (solver.Position.Key, current + mask) is key on board b.
//
// Reading the columns left to right, each stone from the bottom up is a
// digit, 1 for a stone of the player to move and 2 for the opponent's, and
// each column ends with a 0 digit. The key is the smaller of that number and
// the one read right to left, divided by 3 (the last digit is always 0).
// The arithmetic wraps around at 2^64 as his uint64_t does; that happens
// only beyond the depths ponsKeyBytes accepts.
func ponsKey3(b *solver.Board, key uint64) uint64 {
	stride := b.Height() + 1
	column := func(acc uint64, col int) uint64 {
		x := key>>(col*stride)&(1<<stride-1) + 1 // 2^height + stones of the player to move
		for r := range bits.Len64(x) - 1 {
			acc = acc*3 + 2 - x>>r&1
		}
		return acc * 3
	}
	var fwd, rev uint64
	for c := range b.Width() {
		fwd = column(fwd, c)
		rev = column(rev, b.Width()-1-c)
	}
	return min(fwd, rev) / 3
}

// ponsSize returns the number of slots of a table of log2 size logSize: the
// smallest prime above 2^logSize.
func ponsSize(logSize int) uint64 {
	n := uint64(1)<<logSize + 1
	for !new(big.Int).SetUint64(n).ProbablyPrime(0) { // exact below 2^64
		n++
	}
	return n
}

// ponsKeyBytes returns the smallest partial key size (1, 2 or 4 bytes) with
// which a table of size slots never confuses two positions of up to depth
// stones on board b, or an error if none does.
//
// A lookup compares key3 modulo size (the slot) and modulo 2^(8*kb) (the
// partial key). size is an odd prime, so by the Chinese remainder theorem
// the two identify key3 modulo size*2^(8*kb); key3 < 3^(depth+width-1), so
// when size*2^(8*kb) is at least that no position is mistaken for another.
// Pons' generator computes its key size by the same rule.
func ponsKeyBytes(b *solver.Board, depth int, size uint64) (int, error) {
	keys := new(big.Int).Exp(big.NewInt(3), big.NewInt(int64(depth+b.Width()-1)), nil)
	for _, kb := range []int{1, 2, 4} {
		cover := new(big.Int).Lsh(new(big.Int).SetUint64(size), uint(8*kb))
		if cover.Cmp(keys) >= 0 {
			return kb, nil
		}
	}
	return 0, fmt.Errorf("pons book: %d stones on %v need keys beyond 4 bytes with %d slots", depth, b, size)
}

// PonsOptions says how to export a book to Pons' format. A nil *PonsOptions
// is valid.
type PonsOptions struct {
	// MaxDepth is the deepest depth exported; 0 exports every depth. The
	// file's depth is the deepest depth that holds an entry.
	MaxDepth int

	// LogSize is the log2 size of the table, 21..27. The default value (0)
	// is the smallest whose table holds the entries at MaxLoad, or 27.
	LogSize int

	// MaxLoad is the highest ratio of entries to slots the default LogSize
	// accepts. At load L about 1-(1-e^-L)/L of the entries are lost to
	// collisions: 21% at 0.5, 11% at 0.25. The default value is
	// DefaultPonsLoad.
	MaxLoad float64

	// Lost, if set, is called for every entry the file cannot hold, with
	// the reason.
	Lost func(e book.Entry, reason string)
}

// PonsReport says what ExportPons wrote and what it lost.
type PonsReport struct {
	Depth      int    // the file's depth: its deepest position
	KeyBytes   int    // bytes of a partial key
	LogSize    int    // log2 of the table size
	Size       uint64 // slots of the table
	Entries    int64  // entries of the book up to Depth
	Stored     int64  // entries the file holds
	Collided   int64  // entries lost: their slot holds a shallower entry (or one earlier in key order)
	OutOfRange int64  // entries lost: their score has no value in the format
	Bytes      int64  // bytes written
}

// ExportPons writes the book bk, up to opts.MaxDepth, as a .book file of
// Pascal Pons' solver (see the format above), byte for byte what his
// OpeningBook::load reads. Entries are placed shallowest first and a slot
// keeps its first entry, so collisions lose the deeper positions; the
// report counts what was lost. The book is read twice, from one view
// (book.View): writes meanwhile are not in the file.
func ExportPons(bk *book.Book, w io.Writer, opts *PonsOptions) (PonsReport, error) {
	var o PonsOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLoad <= 0 {
		o.MaxLoad = DefaultPonsLoad
	}
	b := bk.Board()
	maxDepth := b.Cells()
	if o.MaxDepth > 0 {
		maxDepth = min(o.MaxDepth, maxDepth)
	}
	var r PonsReport
	view, err := bk.View()
	if err != nil {
		return r, err
	}
	defer view.Close()
	if r.Entries, r.Depth, err = view.Count(0, maxDepth); err != nil {
		return r, err
	}

	switch {
	case o.LogSize == 0:
		r.LogSize = ponsMaxLog
		for l := ponsMinLog; l <= ponsMaxLog; l++ {
			if float64(r.Entries) <= o.MaxLoad*float64(ponsSize(l)) {
				r.LogSize = l
				break
			}
		}
	case o.LogSize < ponsMinLog || o.LogSize > ponsMaxLog:
		return r, fmt.Errorf("pons book: log2 size %d outside [%d, %d], the sizes his loader reads", o.LogSize, ponsMinLog, ponsMaxLog)
	default:
		r.LogSize = o.LogSize
	}
	r.Size = ponsSize(r.LogSize)
	if r.KeyBytes, err = ponsKeyBytes(b, r.Depth, r.Size); err != nil {
		return r, err
	}

	keys := make([]byte, r.Size*uint64(r.KeyBytes))
	values := make([]byte, r.Size)
	var partial [8]byte
	for e, err := range view.Entries(0, r.Depth) {
		if err != nil {
			return r, err
		}
		value := toPonsValue(b, e.Score)
		if value == 0 {
			r.OutOfRange++
			if o.Lost != nil {
				o.Lost(e, fmt.Sprintf("score %d outside [%d, %d]", e.Score, ponsMinScore(b), ponsMaxScore(b)))
			}
			continue
		}
		key3 := ponsKey3(b, e.Key)
		slot := key3 % r.Size
		if values[slot] != 0 {
			r.Collided++
			if o.Lost != nil {
				o.Lost(e, fmt.Sprintf("slot %d holds another position", slot))
			}
			continue
		}
		binary.LittleEndian.PutUint64(partial[:], key3)
		copy(keys[slot*uint64(r.KeyBytes):], partial[:r.KeyBytes])
		values[slot] = value
		r.Stored++
	}

	header := []byte{byte(b.Width()), byte(b.Height()), byte(r.Depth), byte(r.KeyBytes), ponsValueBytes, byte(r.LogSize)}
	for _, part := range [][]byte{header, keys, values} {
		n, err := w.Write(part)
		r.Bytes += int64(n)
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// PonsBook is a .book file of Pons' solver read into memory.
type PonsBook struct {
	Board    *solver.Board
	Depth    int    // positions with more stones are not in the book
	KeyBytes int    // bytes of a partial key
	LogSize  int    // log2 of the table size
	Size     uint64 // slots
	keys     []byte
	values   []byte
}

// ReadPons reads a .book file of Pons' solver. It checks the header as his
// loader does (a board our solver supports, depth at most width*height,
// key bytes 1, 2 or 4, value bytes 1, log2 size 21..27), then reads the
// table. Unlike his loader it refuses data after the table.
func ReadPons(r io.Reader) (*PonsBook, error) {
	br := bufio.NewReader(r)
	var h [ponsHeaderLen]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, fmt.Errorf("pons book: header: %w", err)
	}
	board, err := solver.NewBoard(int(h[0]), int(h[1]))
	if err != nil {
		return nil, fmt.Errorf("pons book: %w", err)
	}
	pb := &PonsBook{Board: board, Depth: int(h[2]), KeyBytes: int(h[3]), LogSize: int(h[5])}
	switch {
	case pb.Depth > board.Cells():
		return nil, fmt.Errorf("pons book: depth %d above %d cells", pb.Depth, board.Cells())
	case pb.KeyBytes != 1 && pb.KeyBytes != 2 && pb.KeyBytes != 4:
		return nil, fmt.Errorf("pons book: key size %d bytes, want 1, 2 or 4", pb.KeyBytes)
	case h[4] != ponsValueBytes:
		return nil, fmt.Errorf("pons book: value size %d bytes, want %d", h[4], ponsValueBytes)
	case pb.LogSize < ponsMinLog || pb.LogSize > ponsMaxLog:
		return nil, fmt.Errorf("pons book: log2 size %d outside [%d, %d]", pb.LogSize, ponsMinLog, ponsMaxLog)
	}
	pb.Size = ponsSize(pb.LogSize)
	pb.keys = make([]byte, pb.Size*uint64(pb.KeyBytes))
	pb.values = make([]byte, pb.Size)
	if _, err := io.ReadFull(br, pb.keys); err != nil {
		return nil, fmt.Errorf("pons book: keys: %w", err)
	}
	if _, err := io.ReadFull(br, pb.values); err != nil {
		return nil, fmt.Errorf("pons book: values: %w", err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pons book: data after the table (or read error: %v)", err)
	}
	return pb, nil
}

// Get returns the score of position p and whether the book holds it, as
// Pons' OpeningBook::get finds it.
func (pb *PonsBook) Get(p solver.Position) (score int, ok bool) {
	b := p.Board()
	if !b.Equal(pb.Board) || p.Moves() > pb.Depth {
		return 0, false
	}
	key3 := ponsKey3(b, p.Key())
	slot := key3 % pb.Size
	var partial [8]byte
	copy(partial[:], pb.keys[slot*uint64(pb.KeyBytes):(slot+1)*uint64(pb.KeyBytes)])
	mask := uint64(1)<<(8*pb.KeyBytes) - 1
	if binary.LittleEndian.Uint64(partial[:]) != key3&mask || pb.values[slot] == 0 {
		return 0, false
	}
	return fromPonsValue(b, pb.values[slot]), true
}

// Len returns the number of positions the book holds: its non-empty slots.
func (pb *PonsBook) Len() int {
	n := 0
	for _, v := range pb.values {
		if v != 0 {
			n++
		}
	}
	return n
}
