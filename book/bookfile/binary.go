package bookfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// # Binary book file
//
// A versioned export of a book's positions ("book export
// --format bin"), for programs that want every entry without Pebble: a
// header, then one fixed-width record per entry. The format is stable: a
// file written by this version of the package is readable by every later
// one; a change that old readers would misread bumps binaryVersion. All
// integers are big-endian.
//
//	 byte 0          7   8         9       10       11      12               19
//	+------------------+---------+-------+--------+-------+------------------+
//	|      magic       | version | width | height | depth | records, uint64  |
//	+------------------+---------+-------+--------+-------+------------------+
//	 0x89 "C4BOOK" 0x0A                                       20 bytes in all
//
//	magic:   binaryMagic. As in PNG's, the first byte is not ASCII: no
//	         text export starts with it, so "book import" tells the formats
//	         apart by it, and a transfer that strips the high bit spoils
//	         it; the line feed is spoilt by one that rewrites line ends.
//	version: binaryVersion (1). A file of a later version is refused with
//	         book.ErrNewerFormat; 0 is invalid.
//	width, height: the board, as the book record's (book/meta.go).
//	depth:   the depth of the last record: the deepest position of the
//	         file; 0 when it has no record.
//	records: the number of records that follow.
//
// Then the records, strictly increasing by (depth, canonical key), the order
// of the book's keys, each 11 bytes:
//
//	 byte 0   1                                   8      9        10
//	+-------+-------------------------------------+--------+--------+
//	| depth |   canonical key, uint64 big-endian  | score  | origin |
//	+-------+-------------------------------------+--------+--------+
//	 bytes 0..8: the book's position key (book/format.go)
//
//	depth:  stones on the board, at most the header's depth.
//	key:    the canonical key of a position of depth stones of the board
//	        (solver.Position.CanonicalKey).
//	score:  int8, two's complement: the exact score in Pons' convention,
//	        in the range possible at that depth (solver.Board.ScoreRange).
//	origin: the book.Origin of the score: 1 solved, 2 derived, 3 imported.
//
// What it keeps: a book stores, for each position, its depth and
// canonical key (the key of the entry) and a Value: a score, an origin
// and, for a solved score, the number of the worker that solved it
// (book/format.go). Every score of every board lies in [-31, 32] and so
// fits an int8, and the origin gets a byte of its own, so an import of the
// file gives back the book's positions, score and origin, entry for entry.
// The worker is not exported: a worker's number means something only in the
// book that registers it, and an imported solved entry has worker 0,
// unknown. (A book's metadata, its board aside, is not exported: the
// job records say how the book was made, not what it holds.) The fields
// are whole bytes, not packed bits, so that any language reads them with
// no bit arithmetic: packing score and origin into one byte would save one
// byte of eleven, and a general-purpose compressor saves more (zstd -19:
// 1.4 bytes an entry on a real book, docs/benchmarks.md).
//
// A reader checks every field: the magic, the version, the board, that the
// header's depth fits the board; then for each record its depth, that its
// key is a canonical position of that depth, the score range, the origin
// and the order; at the end, that the last depth is the header's and that
// nothing follows the last record. A file that is cut short, or damaged
// so that a field breaks these rules, is reported with the index of the
// first bad record and its byte offset (BinaryError). The format has no
// checksum: a score changed into another possible one is read as it is.
// Copy the file with a checksum (or compressed) where that matters.

// Binary file layout constants; see the diagrams above.
const (
	binaryMagic     = "\x89C4BOOK\n"
	binaryVersion   = 1
	binaryHeaderLen = 20 // magic, version, width, height, depth, records
	binaryRecordLen = 11 // depth, key, score, origin

	binaryVersionIdx = 8
	binaryWidthIdx   = 9
	binaryHeightIdx  = 10
	binaryDepthIdx   = 11
	binaryCountIdx   = 12

	binaryKeyLen    = 9                // a record starts with the book's position key
	binaryScoreIdx  = binaryKeyLen     // 9
	binaryOriginIdx = binaryKeyLen + 1 // 10
)

// maxBinaryRecords is the most records a header may announce: more would
// make a file larger than an int64 counts.
const maxBinaryRecords = (math.MaxInt64 - binaryHeaderLen) / binaryRecordLen

// IsBinary reports whether data starts with the magic bytes of a binary
// book file. Give it the first 8 bytes of a file, or more.
func IsBinary(data []byte) bool { return bytes.HasPrefix(data, []byte(binaryMagic)) }

// BinaryMagicLen is the number of bytes IsBinary looks at, and
// BinaryHeaderLen the size of the header of a binary book file.
const (
	BinaryMagicLen  = len(binaryMagic)
	BinaryHeaderLen = binaryHeaderLen
)

// BinaryHeader is what the header of a binary book file says.
type BinaryHeader struct {
	Version int           // binaryVersion of the file
	Board   *solver.Board // the board of the positions
	Depth   int           // the deepest depth of a record; 0 if none
	Records int64         // records in the file
}

// Size returns the size of the file the header describes, in bytes.
func (h BinaryHeader) Size() int64 { return binaryHeaderLen + h.Records*binaryRecordLen }

// appendBinaryHeader appends the 20-byte header h to dst.
func appendBinaryHeader(dst []byte, h BinaryHeader) []byte {
	dst = append(dst, binaryMagic...)
	dst = append(dst, byte(h.Version), byte(h.Board.Width()), byte(h.Board.Height()), byte(h.Depth))
	return binary.BigEndian.AppendUint64(dst, uint64(h.Records))
}

// decodeBinaryHeader decodes and checks a header; see the diagram above.
func decodeBinaryHeader(hdr []byte) (BinaryHeader, error) {
	if !IsBinary(hdr) {
		return BinaryHeader{}, &BinaryError{Record: -1, Reason: fmt.Sprintf("magic %q, want %q: not a binary book file", hdr[:len(binaryMagic)], binaryMagic)}
	}
	h := BinaryHeader{Version: int(hdr[binaryVersionIdx]), Depth: int(hdr[binaryDepthIdx])}
	switch {
	case h.Version > binaryVersion:
		return h, fmt.Errorf("binary book: %w: version %d, this program reads up to %d", book.ErrNewerFormat, h.Version, binaryVersion)
	case h.Version < 1:
		return h, &BinaryError{Record: -1, Offset: binaryVersionIdx, Reason: fmt.Sprintf("version %d", h.Version)}
	}
	board, err := solver.NewBoard(int(hdr[binaryWidthIdx]), int(hdr[binaryHeightIdx]))
	if err != nil {
		return h, &BinaryError{Record: -1, Offset: binaryWidthIdx, Reason: err.Error()}
	}
	h.Board = board
	n := binary.BigEndian.Uint64(hdr[binaryCountIdx:])
	switch {
	case h.Depth > board.Cells():
		return h, &BinaryError{Record: -1, Offset: binaryDepthIdx, Reason: fmt.Sprintf("depth %d above the %d cells of %v", h.Depth, board.Cells(), board)}
	case n > maxBinaryRecords:
		return h, &BinaryError{Record: -1, Offset: binaryCountIdx, Reason: fmt.Sprintf("%d records: more than a file can hold", n)}
	case n == 0 && h.Depth != 0:
		return h, &BinaryError{Record: -1, Offset: binaryDepthIdx, Reason: fmt.Sprintf("depth %d, but no record", h.Depth)}
	}
	h.Records = int64(n)
	return h, nil
}

// appendBinaryRecord appends the 11-byte record of e to dst;
// decodeBinaryRecord is its inverse. e must be valid.
func appendBinaryRecord(dst []byte, e book.Entry) []byte {
	dst = book.AppendKey(dst, e.Depth, e.Key)
	return append(dst, byte(int8(e.Score)), byte(e.Origin))
}

// decodeBinaryRecord decodes a record, unchecked: see BinaryReader.Next.
func decodeBinaryRecord(rec []byte) book.Entry {
	return book.Entry{
		Depth: int(rec[0]),
		Key:   binary.BigEndian.Uint64(rec[1:binaryKeyLen]),
		Value: book.Value{Score: int(int8(rec[binaryScoreIdx])), Origin: book.Origin(rec[binaryOriginIdx])},
	}
}

// BinaryError is a binary book file that cannot be read: its header or a
// record is not what the format says (see the format above), or the file
// ends early. It wraps book.ErrCorrupt.
type BinaryError struct {
	Record int64  // index of the bad record, from 0; -1 for the header
	Offset int64  // byte offset in the file of the bad header field or record
	Reason string // what is wrong
}

func (e *BinaryError) Error() string {
	if e.Record < 0 {
		return fmt.Sprintf("binary book: header (byte %d): %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("binary book: record %d (byte %d): %s", e.Record, e.Offset, e.Reason)
}

// Unwrap returns book.ErrCorrupt.
func (e *BinaryError) Unwrap() error { return book.ErrCorrupt }

// BinaryReader reads a binary book file record by record, checking each
// (see the format above). It holds one record at a time: a file of any
// size is read in constant memory. It is not safe for concurrent use.
type BinaryReader struct {
	h    BinaryHeader
	r    *bufio.Reader
	next int64      // index of the next record
	prev book.Entry // the last record read
	rec  [binaryRecordLen]byte
	err  error // the error that ended the file, io.EOF at its end
}

// NewBinaryReader reads and checks the header of a binary book file. A
// header that is not one gives a *BinaryError (or an error wrapping
// book.ErrNewerFormat for a later version of the format).
func NewBinaryReader(r io.Reader) (*BinaryReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [binaryHeaderLen]byte
	if n, err := io.ReadFull(br, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if m := min(n, len(binaryMagic)); string(hdr[:m]) != binaryMagic[:m] {
				return nil, &BinaryError{Record: -1, Reason: fmt.Sprintf("%d bytes starting %q: not a binary book file", n, hdr[:m])}
			}
			return nil, &BinaryError{Record: -1, Offset: int64(n), Reason: fmt.Sprintf("truncated: the file ends after %d of the header's %d bytes", n, binaryHeaderLen)}
		}
		return nil, fmt.Errorf("binary book: header: %w", err)
	}
	h, err := decodeBinaryHeader(hdr[:])
	if err != nil {
		return nil, err
	}
	return &BinaryReader{h: h, r: br}, nil
}

// Header returns the file's header.
func (r *BinaryReader) Header() BinaryHeader { return r.h }

// Read returns the number of records read so far.
func (r *BinaryReader) Read() int64 { return r.next }

// Next returns the next record as an entry. After the last record it
// checks that the file ends there and returns io.EOF. A record that breaks
// the format, or a file that ends early or goes on, gives a *BinaryError
// naming the record; a failed read, the read error. Once it has returned
// an error, Next returns it again.
func (r *BinaryReader) Next() (book.Entry, error) {
	if r.err != nil {
		return book.Entry{}, r.err
	}
	e, err := r.next1()
	if err != nil {
		r.err = err
		return book.Entry{}, err
	}
	r.prev = e
	r.next++
	return e, nil
}

// next1 reads and checks the next record, or the end of the file.
func (r *BinaryReader) next1() (book.Entry, error) {
	i, off := r.next, binaryHeaderLen+r.next*binaryRecordLen
	bad := func(format string, args ...any) error {
		return &BinaryError{Record: i, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	if i == r.h.Records {
		switch _, err := r.r.ReadByte(); {
		case errors.Is(err, io.EOF):
			if i > 0 && r.prev.Depth != r.h.Depth {
				return book.Entry{}, bad("the header's depth is %d, the last record's %d", r.h.Depth, r.prev.Depth)
			}
			return book.Entry{}, io.EOF
		case err != nil:
			return book.Entry{}, fmt.Errorf("binary book: after record %d: %w", i-1, err)
		}
		return book.Entry{}, bad("data after the last of the header's %d records", r.h.Records)
	}
	if n, err := io.ReadFull(r.r, r.rec[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return book.Entry{}, bad("truncated: the file ends %d bytes into record %d of the header's %d", n, i, r.h.Records)
		}
		return book.Entry{}, fmt.Errorf("binary book: record %d: %w", i, err)
	}
	e := decodeBinaryRecord(r.rec[:])
	if e.Depth > r.h.Depth {
		return book.Entry{}, bad("depth %d above the header's %d", e.Depth, r.h.Depth)
	}
	if i > 0 && (e.Depth < r.prev.Depth || e.Depth == r.prev.Depth && e.Key <= r.prev.Key) {
		return book.Entry{}, bad("out of order: depth %d key %#x after depth %d key %#x", e.Depth, e.Key, r.prev.Depth, r.prev.Key)
	}
	if err := checkPosition(r.h.Board, e.Depth, e.Key); err != nil {
		return book.Entry{}, bad("%v", err)
	}
	if lo, hi := r.h.Board.ScoreRange(e.Depth); e.Score < lo || e.Score > hi {
		return book.Entry{}, bad("depth %d key %#x: score %d outside [%d, %d], the range at depth %d", e.Depth, e.Key, e.Score, lo, hi, e.Depth)
	}
	if !e.Origin.Valid() {
		return book.Entry{}, bad("depth %d key %#x: invalid %v", e.Depth, e.Key, e.Origin)
	}
	return e, nil
}

// checkPosition returns an error if key is not the canonical key of a
// position of depth stones of board b (book.KeyPosition).
func checkPosition(b *solver.Board, depth int, key uint64) error {
	_, err := book.KeyPosition(b, depth, key)
	return err
}

// ExportBinary writes the entries of bk of depths minDepth..maxDepth as a
// binary book file (see the format above) and returns its header. The
// book is read twice, from one view (book.View), so that the header can give the number of
// records and the deepest depth before them: writes meanwhile are not in
// the file. An entry that cannot be decoded ends the export with a
// *book.CorruptError naming its key, having written part of the file.
func ExportBinary(bk *book.Book, w io.Writer, minDepth, maxDepth int) (BinaryHeader, error) {
	h := BinaryHeader{Version: binaryVersion, Board: bk.Board()}
	view, err := bk.View()
	if err != nil {
		return h, err
	}
	defer view.Close()
	if h.Records, h.Depth, err = view.Count(minDepth, maxDepth); err != nil {
		return h, err
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(appendBinaryHeader(nil, h)); err != nil {
		return h, err
	}
	var n int64
	var rec []byte
	for e, err := range view.Entries(minDepth, maxDepth) {
		if err != nil {
			return h, err
		}
		n++
		rec = appendBinaryRecord(rec[:0], e)
		if _, err := bw.Write(rec); err != nil {
			return h, err
		}
	}
	if n != h.Records {
		return h, fmt.Errorf("binary export: the snapshot held %d entries, then %d", h.Records, n)
	}
	return h, bw.Flush()
}

// ImportBinary reads a binary book file (see ExportBinary) and stores its
// entries in bk, in synced batches of opts.BatchSize entries, as ImportText does
// with lines: ImportStats.Lines counts the records read. Each entry keeps
// the origin the file gives it, unless opts.Origin is set. A position the
// book holds keeps its entry: with the same score nothing is written (its
// origin stays), with another the record is a conflict, reported to
// opts.Errors and skipped, unless opts.Overwrite.
//
// A file of another board than the book's is refused before anything is
// written (book.ErrBoardMismatch). A record that breaks the format ends the
// import with a *BinaryError naming it, as does a failed read or write; the
// entries of the batches written before stay in the book.
func ImportBinary(bk *book.Book, r io.Reader, opts *ImportOptions) (ImportStats, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.Origin != 0 && !o.Origin.Valid() {
		return ImportStats{}, fmt.Errorf("import: invalid %v", o.Origin)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultImportBatch
	}
	if err := bk.CheckWritable(); err != nil {
		return ImportStats{}, err
	}
	br, err := NewBinaryReader(r)
	if err != nil {
		return ImportStats{}, err
	}
	if h := br.Header(); !h.Board.Equal(bk.Board()) {
		return ImportStats{}, fmt.Errorf("%w: the file holds %v positions, the book %v", book.ErrBoardMismatch, h.Board, bk.Board())
	}
	var st ImportStats
	batch := bk.NewBatch()
	defer batch.Close()
	// The records are strictly increasing: none repeats an earlier one, so
	// each is checked against the book as written before the import.
	reader, err := bk.NewReader()
	if err != nil {
		return st, err
	}
	defer func() { reader.Close() }()
	commit := func() error {
		n := batch.Len()
		if err := batch.Commit(); err != nil {
			return fmt.Errorf("import: record %d: %w", st.Lines-1, err)
		}
		st.Entries += int64(n)
		return nil
	}
	for {
		e, err := br.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		st.Lines++
		if o.Origin != 0 {
			e.Origin = o.Origin
		}
		held, ok, err := reader.GetEntry(e.Depth, e.Key)
		switch {
		case err != nil:
			return st, err
		case ok && held.Score == e.Score:
			st.Held++
			continue
		case ok && !o.Overwrite:
			st.Conflicts++
			if o.Errors != nil {
				fmt.Fprintf(o.Errors, "record %d: %s: score %d, but %d is held: kept (--overwrite replaces it)\n",
					st.Lines-1, describe(bk.Board(), e), e.Score, held.Score)
			}
			continue
		}
		if err := batch.Put(e); err != nil {
			return st, fmt.Errorf("import: record %d: %w", st.Lines-1, err)
		}
		if batch.Len() >= o.BatchSize {
			if err := commit(); err != nil {
				return st, err
			}
		}
	}
	return st, commit()
}

// describe names an entry of board b for a message: a game reaching its
// position, and its depth and key.
func describe(b *solver.Board, e book.Entry) string {
	if p, err := b.PositionFromKey(e.Key); err == nil {
		if moves, ok := p.MoveString(); ok {
			return fmt.Sprintf("%s (depth %d key %#x)", solver.FormatMoves(moves), e.Depth, e.Key)
		}
	}
	return fmt.Sprintf("depth %d key %#x", e.Depth, e.Key)
}

// LoadBinary reads a binary book file (see ExportBinary) into memory,
// checking it as BinaryReader does (book.LoadEntries). When r is a file,
// its size must be the one its header gives.
func LoadBinary(r io.Reader) (*book.Loaded, error) {
	br, err := NewBinaryReader(r)
	if err != nil {
		return nil, err
	}
	h := br.Header()
	if h.Records > book.MaxLoaded {
		return nil, fmt.Errorf("load: %d records, more than %d", h.Records, book.MaxLoaded)
	}
	// The header's count is trusted for the arrays' size only once the
	// file's size confirms it; otherwise they grow as records come.
	capacity := int(min(h.Records, 1<<16))
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() != h.Size() {
				return nil, &BinaryError{Record: -1, Offset: binaryCountIdx,
					Reason: fmt.Sprintf("%d records make a file of %d bytes, the file has %d", h.Records, h.Size(), fi.Size())}
			}
			capacity = int(h.Records)
		}
	}
	return book.LoadEntries(h.Board, capacity, func(yield func(book.Entry, error) bool) {
		for {
			e, err := br.Next()
			if errors.Is(err, io.EOF) || !yield(e, err) || err != nil {
				return
			}
		}
	})
}
