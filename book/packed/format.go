package packed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/c4book/c4book/solver"
)

// # The packed file, version 1
//
// All integers are little-endian. The file is a header, then the data:
//
//	 byte 0            8         12          16              24
//	+------------------+---------+-----------+---------------+-------------+-----------+
//	|      magic       | version | headerLen | dataLen       | header body | header    |
//	| 0x89 "C4PACK" \n | uint32  | uint32 H  | uint64 L      | (below)     | CRC-32C   |
//	+------------------+---------+-----------+---------------+-------------+-----------+
//	 bytes 0 .. H-1: the header; its last 4 bytes are the CRC-32C (Castagnoli) of
//	 the bytes before them. Then bytes H .. H+L-1: the data, the arrays of the
//	 layers (below), one after the other. The file is H+L bytes, no more.
//
// The header body:
//
//	width, height  uint8 each: the board
//	depth          uint8: the deepest positions held (the job's depth)
//	rootLen        uint8, then rootLen bytes: the root, a move string of
//	               columns '1'..'9' ("" for the empty board)
//	positions      uint64: the positions of the set, every level
//	digest         32 bytes: the book digest of the root to the depth (SHA-256,
//	               book/digest.go: the same hex as `c4book book digest`)
//	levels         uint8: depth - root stones + 1, one level per number of stones
//	per level, shallowest first:
//	  positions    uint64: positions of the set with this many stones
//	  winNow       uint64: of them, those whose player to move makes four now
//	  loseNext     uint64: of them, those whose player to move cannot stop the
//	               opponent making four next (solver's LosesNext)
//	  stored       uint64: the others: their scores are in the layers
//	  scheme       uint8: how the level's positions are split into contexts
//	               (context.go); each context has a code of its own
//	  contexts     uint16, then one code per context (code.go): a count n of
//	               the scores coded (uint8); n = 0: none; n = 1: one byte, the
//	               score's symbol, coded in 0 bits; n >= 2: a 4-bit code length
//	               (1..15; 0: the score does not occur) for each symbol of the
//	               level, two to a byte, the first in the low half
//	  buckets      uint32, then for each bucket:
//	    layers     uint8, then for each layer: keys uint32, seed uint64,
//	               segmentBits uint8, segmentCount uint32, offset uint64 (of the
//	               array in the data; its length is fuse.Params.Bytes)
//	blockBits      uint8: the data is checked in blocks of 2^blockBits bytes (12)
//	blocks         uint32, then one CRC-32C a block, uint32 (the last block may
//	               be short)
//
// A symbol is a score less the lowest score of the level: score -
// solver.Board.ScoreRange(stones).lo, 0..63.
//
// # Where a score is
//
// A position of the set is scored by the rules when its player to move
// makes four now (WinNowScore) or cannot stop the opponent's four
// (ScoreRange's lowest); those cost nothing. Each other one has a code: the
// canonical Huffman code (code.go) of its score in the code of its
// context. Its bucket is (Mix(key ^ bucketSalt) * buckets) >> 64 (Mix is
// internal/splitmix's, key the canonical key); layer j of the bucket holds
// bit j of the code (the first bit is the code's highest) of each of the
// bucket's positions whose code is longer than j, in a binary fuse array
// (internal/fuse) of those keys: the bit is the xor of three bits of the
// array. A reader gets bit 0, then bit 1, ..., until the bits read are a
// code of the context.
//
// The positions themselves are not stored: membership is computed (see
// File.Contains), so a position outside the set is "not in the book", never
// the arbitrary bits a fuse array gives a key it was not built with.
//
// Stability: a file written by this version is readable by every later
// one. A change that a reader of this version would misread bumps
// FormatVersion; a reader refuses a newer version, a context scheme it
// does not know, and a file that breaks any rule above, naming what and
// where.
const (
	formatMagic = "\x89C4PACK\n"
	prefixLen   = 24 // magic, version, header length, data length
	crcLen      = 4
	blockBits   = 12 // blocks of 4 KiB
	maxCodeLen  = 15 // code lengths fit 4 bits
	bucketSalt  = 0x6a09e667f3bcc908
)

// bucketKeys is the most stored positions a bucket of a level gets on
// average, as a builder splits them (a reader takes any number of
// buckets): a fuse array of 4 Mi keys is as small as larger ones (1.125
// bits a key), and building it takes about 50 MB. A variable for tests,
// which make levels of many small buckets.
var bucketKeys = 1 << 22

// FormatVersion is the version of the packed files this package writes,
// and the latest it reads.
const FormatVersion = 1

// crcTable is the CRC-32C table of the header's and blocks' checksums.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrNotPacked is wrapped by the error of a file that is not a packed book.
var ErrNotPacked = errors.New("not a packed book")

// ErrNewerFormat is wrapped by the error of a packed book of a later format
// version, or of a context scheme this program does not know.
var ErrNewerFormat = errors.New("packed book of a newer format")

// ErrDamaged is wrapped by the errors of a damaged or truncated file: a
// checksum that fails, a field that breaks the format's rules.
var ErrDamaged = errors.New("packed book damaged")

// DamagedError says where a packed file is damaged.
type DamagedError struct {
	Path   string
	Offset int64  // byte offset of the damage, or of the block holding it
	Reason string // what is wrong
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("packed book %s: damaged at byte %d: %s", e.Path, e.Offset, e.Reason)
}

// Unwrap returns ErrDamaged.
func (e *DamagedError) Unwrap() error { return ErrDamaged }

// IsPacked reports whether data starts with the magic bytes of a packed
// book. Give it the first MagicLen bytes of a file, or more.
func IsPacked(data []byte) bool {
	return len(data) >= len(formatMagic) && string(data[:len(formatMagic)]) == formatMagic
}

// MagicLen is the number of bytes IsPacked looks at.
const MagicLen = len(formatMagic)

// layerInfo is one layer of a bucket: a fuse array of keys keys.
type layerInfo struct {
	keys         uint32
	seed         uint64
	segmentBits  uint8
	segmentCount uint32
	offset       uint64
}

// levelInfo is the header's record of one level.
type levelInfo struct {
	positions, winNow, loseNext, stored uint64
	scheme                              uint8
	codes                               []code        // one per context
	buckets                             [][]layerInfo // layers of each bucket
}

// header is the header's body, parsed.
type header struct {
	board     *solver.Board
	depth     int
	root      string
	positions uint64
	digest    [32]byte
	levels    []levelInfo
	blocks    []uint32 // CRC-32C of each block of the data
	dataLen   uint64
}

// encoder appends the fields of a header.
type encoder struct{ buf []byte }

func (e *encoder) u8(v uint8)   { e.buf = append(e.buf, v) }
func (e *encoder) u16(v uint16) { e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }
func (e *encoder) u32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) bytes(b []byte) {
	e.buf = append(e.buf, b...)
}

// encode returns the header's bytes, checksum included.
func (h *header) encode() []byte {
	e := &encoder{buf: make([]byte, prefixLen, 1<<12)}
	copy(e.buf, formatMagic)
	binary.LittleEndian.PutUint32(e.buf[8:], FormatVersion)
	binary.LittleEndian.PutUint64(e.buf[16:], h.dataLen)
	e.u8(uint8(h.board.Width()))
	e.u8(uint8(h.board.Height()))
	e.u8(uint8(h.depth))
	e.u8(uint8(len(h.root)))
	e.bytes([]byte(h.root))
	e.u64(h.positions)
	e.bytes(h.digest[:])
	e.u8(uint8(len(h.levels)))
	for i := range h.levels {
		lv := &h.levels[i]
		e.u64(lv.positions)
		e.u64(lv.winNow)
		e.u64(lv.loseNext)
		e.u64(lv.stored)
		e.u8(lv.scheme)
		e.u16(uint16(len(lv.codes)))
		for _, c := range lv.codes {
			c.encode(e)
		}
		e.u32(uint32(len(lv.buckets)))
		for _, layers := range lv.buckets {
			e.u8(uint8(len(layers)))
			for _, l := range layers {
				e.u32(l.keys)
				e.u64(l.seed)
				e.u8(l.segmentBits)
				e.u32(l.segmentCount)
				e.u64(l.offset)
			}
		}
	}
	e.u8(blockBits)
	e.u32(uint32(len(h.blocks)))
	for _, c := range h.blocks {
		e.u32(c)
	}
	binary.LittleEndian.PutUint32(e.buf[12:], uint32(len(e.buf)+crcLen))
	e.u32(crc32.Checksum(e.buf, crcTable))
	return e.buf
}

// decoder reads the fields of a header, remembering the first field that
// runs past its end.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.buf)-d.off {
		d.err = fmt.Errorf("the header ends at byte %d, inside a field of %d bytes at %d", len(d.buf), n, d.off)
		d.off = len(d.buf)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

func (d *decoder) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// headerPrefix returns the header length and data length of a file whose
// first prefixLen bytes are prefix, after checking magic and version.
func headerPrefix(prefix []byte) (headerLen uint32, dataLen uint64, err error) {
	if !IsPacked(prefix) {
		return 0, 0, ErrNotPacked
	}
	if len(prefix) < prefixLen {
		return 0, 0, fmt.Errorf("%w: %d bytes, shorter than the header's first %d", ErrDamaged, len(prefix), prefixLen)
	}
	switch v := binary.LittleEndian.Uint32(prefix[8:]); {
	case v == 0:
		return 0, 0, fmt.Errorf("%w: format version 0", ErrDamaged)
	case v > FormatVersion:
		return 0, 0, fmt.Errorf("%w: format version %d, this program reads up to %d", ErrNewerFormat, v, FormatVersion)
	}
	headerLen = binary.LittleEndian.Uint32(prefix[12:])
	dataLen = binary.LittleEndian.Uint64(prefix[16:])
	if headerLen < prefixLen+crcLen {
		return 0, 0, fmt.Errorf("%w: a header of %d bytes", ErrDamaged, headerLen)
	}
	return headerLen, dataLen, nil
}

// decodeHeader parses and checks a whole header (its checksum included).
// Every count is checked against what the board and the data allow, so
// that a damaged header is an error, never a huge allocation or a read
// outside the file.
func decodeHeader(buf []byte) (*header, error) {
	headerLen, dataLen, err := headerPrefix(buf)
	if err != nil {
		return nil, err
	}
	if uint64(len(buf)) != uint64(headerLen) {
		return nil, fmt.Errorf("%w: the header is %d bytes, %d read", ErrDamaged, headerLen, len(buf))
	}
	body := buf[:len(buf)-crcLen]
	if want, got := binary.LittleEndian.Uint32(buf[len(body):]), crc32.Checksum(body, crcTable); want != got {
		return nil, fmt.Errorf("%w: the header's checksum is %08x, its bytes give %08x", ErrDamaged, want, got)
	}
	d := &decoder{buf: body, off: prefixLen}
	h := &header{dataLen: dataLen}
	width, height := int(d.u8()), int(d.u8())
	h.depth = int(d.u8())
	h.root = string(d.take(int(d.u8())))
	h.positions = d.u64()
	copy(h.digest[:], d.take(32))
	nLevels := int(d.u8())
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, d.err)
	}
	if h.board, err = solver.NewBoard(width, height); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	root, err := h.board.Parse(h.root)
	if err != nil {
		return nil, fmt.Errorf("%w: root: %v", ErrDamaged, err)
	}
	if root.Over() {
		return nil, fmt.Errorf("%w: root %s: the game is over", ErrDamaged, h.root)
	}
	if h.depth < root.Moves() || h.depth > h.board.Cells() {
		return nil, fmt.Errorf("%w: depth %d, root of %d stones on %v", ErrDamaged, h.depth, root.Moves(), h.board)
	}
	if nLevels != h.depth-root.Moves()+1 {
		return nil, fmt.Errorf("%w: %d levels for stones %d to %d", ErrDamaged, nLevels, root.Moves(), h.depth)
	}
	var total uint64
	h.levels = make([]levelInfo, nLevels)
	for i := range h.levels {
		stones := root.Moves() + i
		lv := &h.levels[i]
		lv.positions, lv.winNow, lv.loseNext, lv.stored = d.u64(), d.u64(), d.u64(), d.u64()
		lv.scheme = d.u8()
		nCodes := int(d.u16())
		if d.err == nil && lv.winNow+lv.loseNext+lv.stored != lv.positions || lv.positions > maxLevelPositions {
			return nil, fmt.Errorf("%w: level %d: %d positions, %d + %d + %d by kind", ErrDamaged, stones, lv.positions, lv.winNow, lv.loseNext, lv.stored)
		}
		total += lv.positions
		if want, ok := schemeContexts(lv.scheme); !ok {
			return nil, fmt.Errorf("%w: level %d: context scheme %d", ErrNewerFormat, stones, lv.scheme)
		} else if nCodes != want {
			return nil, fmt.Errorf("%w: level %d: %d codes, scheme %d has %d contexts", ErrDamaged, stones, nCodes, lv.scheme, want)
		}
		lo, hi := h.board.ScoreRange(stones)
		lv.codes = make([]code, nCodes)
		for c := range lv.codes {
			if err := lv.codes[c].decode(d, hi-lo+1); err != nil {
				return nil, fmt.Errorf("%w: level %d, context %d: %v", ErrDamaged, stones, c, err)
			}
		}
		nBuckets := d.u32()
		// Each bucket takes a byte of the header at least.
		if d.err == nil && (nBuckets == 0 || uint64(nBuckets) > max(lv.stored, 1) || int(nBuckets) > len(d.buf)-d.off) {
			return nil, fmt.Errorf("%w: level %d: %d buckets for %d positions", ErrDamaged, stones, nBuckets, lv.stored)
		}
		if d.err != nil {
			break
		}
		lv.buckets = make([][]layerInfo, nBuckets)
		for b := range lv.buckets {
			nLayers := int(d.u8())
			if nLayers > maxCodeLen {
				return nil, fmt.Errorf("%w: level %d, bucket %d: %d layers, codes are at most %d bits", ErrDamaged, stones, b, nLayers, maxCodeLen)
			}
			layers := make([]layerInfo, nLayers)
			for j := range layers {
				l := &layers[j]
				l.keys, l.seed, l.segmentBits, l.segmentCount, l.offset = d.u32(), d.u64(), d.u8(), d.u32(), d.u64()
				if d.err != nil {
					break
				}
				p := l.params()
				if err := p.Valid(); err != nil {
					return nil, fmt.Errorf("%w: level %d, bucket %d, layer %d: %v", ErrDamaged, stones, b, j, err)
				}
				if uint64(l.keys) > lv.stored || l.offset > dataLen || p.Bytes() > dataLen-l.offset {
					return nil, fmt.Errorf("%w: level %d, bucket %d, layer %d: %d keys, %d bytes at %d, data of %d bytes",
						ErrDamaged, stones, b, j, l.keys, p.Bytes(), l.offset, dataLen)
				}
			}
			lv.buckets[b] = layers
		}
	}
	bb := d.u8()
	nBlocks := d.u32()
	if d.err == nil {
		if bb != blockBits {
			return nil, fmt.Errorf("%w: blocks of 2^%d bytes, want 2^%d", ErrDamaged, bb, blockBits)
		}
		if want := (dataLen + 1<<blockBits - 1) >> blockBits; uint64(nBlocks) != want {
			return nil, fmt.Errorf("%w: %d block checksums for %d bytes of data, want %d", ErrDamaged, nBlocks, dataLen, want)
		}
		if raw := d.take(4 * int(nBlocks)); raw != nil {
			h.blocks = make([]uint32, nBlocks)
			for i := range h.blocks {
				h.blocks[i] = binary.LittleEndian.Uint32(raw[4*i:])
			}
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, d.err)
	}
	if d.off != len(body) {
		return nil, fmt.Errorf("%w: %d bytes of the header follow its last field", ErrDamaged, len(body)-d.off)
	}
	if total != h.positions {
		return nil, fmt.Errorf("%w: %d positions, the levels hold %d", ErrDamaged, h.positions, total)
	}
	return h, nil
}

// maxLevelPositions bounds a level's positions: no board has more keys
// than fit in 2^63 (a sanity bound against damaged counts).
const maxLevelPositions = 1 << 62
