package bookfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Text format: one position a line, "moves score", where moves is a move
// string (1-based column digits, as in Pascal Pons' test sets) and score
// its exact score in Pons' convention: "4453 -2". The empty board is
// written solver.EmptyMoves, "-", as c4book's command line writes it: "- 0".
// ImportText also reads the form older exports wrote for it, an empty
// move string: " 0", a space then the score.

// MaxLineBytes is the longest line of text input read whole. A position's
// line is far shorter (a move string has at most 63 moves): a longer one is
// not a position, and is reported by its first bytes.
const MaxLineBytes = 4096

// Line is a line of text input: its 1-based number and its bytes, without
// the line break.
type Line struct {
	Num     int
	Text    []byte // valid only during the call
	TooLong bool   // longer than MaxLineBytes: Text holds its first bytes only
}

// Ignorable reports whether the line holds nothing to read: only spaces,
// or a comment (its first byte that is not a space is '#').
func (l Line) Ignorable() bool {
	t := bytes.TrimSpace(l.Text)
	return !l.TooLong && (len(t) == 0 || t[0] == '#')
}

// Quote quotes a line for a message, up to 40 bytes of it.
func (l Line) Quote() string {
	const most = 40
	if len(l.Text) <= most && !l.TooLong {
		return strconv.Quote(string(l.Text))
	}
	return strconv.Quote(string(l.Text[:min(most, len(l.Text))])) + "..."
}

// ScanLines calls fn with each line of r, until the end of r or until fn
// returns false. A line of any length is read: one over MaxLineBytes is
// given with TooLong set, and its first bytes. It returns the read error,
// if any, with the number of the line it happened on.
func ScanLines(r io.Reader, fn func(Line) bool) error {
	br := bufio.NewReaderSize(r, MaxLineBytes)
	var head []byte
	for num := 1; ; num++ {
		text, err := br.ReadSlice('\n')
		l := Line{Num: num, Text: text}
		if errors.Is(err, bufio.ErrBufferFull) {
			head = append(head[:0], text[:64]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			l = Line{Num: num, Text: head, TooLong: true}
		}
		l.Text = bytes.TrimSuffix(bytes.TrimSuffix(l.Text, []byte("\n")), []byte("\r"))
		if (len(text) > 0 || err == nil) && !fn(l) {
			return nil
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("line %d: %w", num, err)
		}
	}
}

// ExportText writes every entry of bk of depths minDepth..maxDepth as a
// "moves score" line, in key order. The move string is one game reaching
// the position of the entry's canonical key (solver.Position.MoveString):
// the position stored or its mirror image, which share the entry and the
// score; the empty board's is solver.EmptyMoves. It returns the number of
// lines written. An entry that cannot be decoded, or whose position no
// game reaches, ends it with a *book.CorruptError naming its key.
func ExportText(bk *book.Book, w io.Writer, minDepth, maxDepth int) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	var line []byte
	for e, err := range bk.Entries(minDepth, maxDepth) {
		if err != nil {
			return n, err
		}
		p, err := bk.Board().PositionFromKey(e.Key)
		if err != nil {
			return n, &book.CorruptError{Key: book.AppendKey(nil, e.Depth, e.Key), Reason: err.Error()}
		}
		moves, ok := p.MoveString()
		if !ok {
			return n, &book.CorruptError{Key: book.AppendKey(nil, e.Depth, e.Key), Reason: "no game reaches this position"}
		}
		line = append(line[:0], solver.FormatMoves(moves)...)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(e.Score), 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return n, err
		}
		n++
	}
	return n, bw.Flush()
}

// DefaultImportBatch is the default number of entries of one import batch.
const DefaultImportBatch = 10000

// ImportOptions says how to import a text file. A nil *ImportOptions is
// valid.
type ImportOptions struct {
	// Origin is the origin of the imported entries. The default value is
	// book.OriginImported.
	Origin book.Origin

	// BatchSize is the number of entries written per synced batch. The
	// default value is DefaultImportBatch.
	BatchSize int

	// Errors receives one line per bad or conflicting input line: its
	// line number, what is wrong and the line. The default value (nil)
	// discards them.
	Errors io.Writer

	// Overwrite replaces a score the book holds (or an earlier line gave)
	// with a different one. Without it such a line is a conflict: it is
	// reported and skipped, and the score held stays. The default value is
	// false.
	Overwrite bool
}

// ImportStats counts what an import read and wrote.
type ImportStats struct {
	Lines     int64 // lines read
	Entries   int64 // entries written: new, or replacing another score (Overwrite)
	Held      int64 // lines whose score the book held already: nothing written
	Conflicts int64 // lines whose score differs from the one held, skipped (no Overwrite)
	Skipped   int64 // blank lines and comments (lines starting with '#')
	Bad       int64 // bad lines, reported to ImportOptions.Errors and skipped
}

// AnyBad reports whether any line was bad or a conflict.
func (s ImportStats) AnyBad() bool { return s.Bad > 0 || s.Conflicts > 0 }

// ImportText reads "moves score" lines (see ExportText) and stores in bk each
// position with its score, in synced batches of opts.BatchSize entries.
// Blank lines and lines starting with '#' are skipped. A line is bad, and
// reported with its line number and skipped, if it does not have that
// form, its moves cannot be played, its game is over, or its score is
// impossible for its position (outside the range at its depth, or not the
// score of a win with the next stone when the player to move has one). A
// position the book holds (or an earlier line gave) keeps its entry: with
// the same score nothing is written, with another the line is a conflict,
// reported and skipped, unless opts.Overwrite. ImportText returns an error
// only when reading or writing fails; the entries of the batches written
// before stay in the book.
func ImportText(bk *book.Book, r io.Reader, opts *ImportOptions) (ImportStats, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.Origin == 0 {
		o.Origin = book.OriginImported
	}
	if !o.Origin.Valid() {
		return ImportStats{}, fmt.Errorf("import: invalid %v", o.Origin)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultImportBatch
	}
	if err := bk.CheckWritable(); err != nil {
		return ImportStats{}, err
	}
	var st ImportStats
	batch := bk.NewBatch()
	defer batch.Close()
	// The scores of the batch not yet written, and a reader of the book as
	// written so far: a line is checked against both.
	pending := make(map[[2]uint64]int)
	reader, err := bk.NewReader()
	if err != nil {
		return st, err
	}
	defer func() { reader.Close() }()
	commit := func() error {
		n := batch.Len()
		if err := batch.Commit(); err != nil {
			return fmt.Errorf("import: line %d: %w", st.Lines, err)
		}
		st.Entries += int64(n)
		clear(pending)
		reader.Close()
		reader, err = bk.NewReader()
		return err
	}
	report := func(l Line, err error) {
		if o.Errors != nil {
			fmt.Fprintf(o.Errors, "line %d: %v: %s\n", l.Num, err, l.Quote())
		}
	}
	var werr error // a failed read or write of the book
	rerr := ScanLines(r, func(l Line) bool {
		st.Lines++
		if l.Ignorable() {
			st.Skipped++
			return true
		}
		var e book.Entry
		err := errLineTooLong
		if !l.TooLong {
			e, err = parseLine(bk.Board(), string(l.Text), o.Origin)
		}
		if err != nil {
			st.Bad++
			report(l, err)
			return true
		}
		id := [2]uint64{uint64(e.Depth), e.Key}
		held, ok := pending[id]
		if !ok {
			var v book.Value
			if v, ok, werr = reader.GetEntry(e.Depth, e.Key); werr != nil {
				return false
			}
			held = v.Score
		}
		switch {
		case ok && held == e.Score:
			st.Held++
			return true
		case ok && !o.Overwrite:
			st.Conflicts++
			report(l, fmt.Errorf("score %d, but %d is held: kept (--overwrite replaces it)", e.Score, held))
			return true
		}
		if err := batch.Put(e); err != nil {
			st.Bad++
			report(l, err)
			return true
		}
		pending[id] = e.Score
		if batch.Len() >= o.BatchSize {
			werr = commit()
		}
		return werr == nil
	})
	switch {
	case werr != nil:
		return st, werr
	case rerr != nil:
		return st, fmt.Errorf("import: %w", rerr)
	}
	return st, commit()
}

// errLineTooLong is the error of a line longer than MaxLineBytes.
var errLineTooLong = fmt.Errorf("longer than %d bytes: not a position", MaxLineBytes)

// parseLine parses and checks one "moves score" line of a position on
// board b.
func parseLine(b *solver.Board, line string, origin book.Origin) (book.Entry, error) {
	fields := strings.Fields(line)
	var moves, score string
	switch {
	case len(fields) == 2:
		moves, score = fields[0], fields[1]
	case len(fields) == 1 && (line[0] == ' ' || line[0] == '\t'):
		score = fields[0] // the empty board, as older exports wrote it
	default:
		return book.Entry{}, fmt.Errorf("want \"moves score\"")
	}
	s, err := strconv.Atoi(score)
	if err != nil {
		return book.Entry{}, fmt.Errorf("score %q is not an integer", score)
	}
	p, err := b.Parse(moves)
	if err != nil {
		return book.Entry{}, err
	}
	if p.Moves() > 0 && p.LastMoveWon() {
		return book.Entry{}, fmt.Errorf("the game is over: the last move made four")
	}
	if lo, hi := b.ScoreRange(p.Moves()); s < lo || s > hi {
		return book.Entry{}, fmt.Errorf("score %d outside [%d, %d], the range after %d moves", s, lo, hi, p.Moves())
	}
	if win := b.WinNowScore(p.Moves()); p.CanWinNext() && s != win {
		return book.Entry{}, fmt.Errorf("score %d: the player to move makes four at once, the score is %d", s, win)
	}
	return book.EntryOf(p, book.Value{Score: s, Origin: origin}), nil
}
