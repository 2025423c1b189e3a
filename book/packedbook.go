package book

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/c4book/c4book/book/packed"
	"github.com/c4book/c4book/solver"
)

// # Packed books
//
// A Book is one of two forms: a Pebble database (the book of record, which
// jobs write) or a packed file (package packed: a finished book made to be
// shipped and read, `c4book book pack`). Open tells them apart and every
// reading method reads either; a packed book is always read-only, and
// opening one for writing fails with ErrReadOnly, saying why.
//
// What a packed book keeps is the set of one job and each position's
// exact score: it has no origin, worker, job record or registry. Its
// entries read as the job that generated them wrote them: a position of
// the job's depth solved (OriginSolved) unless its player to move makes
// four at once, every other one derived (OriginDerived); its one job is
// the job of its root and depth, done; it registers no worker.

// isPackedFile reports whether the file at path starts as a packed book.
func isPackedFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, packed.MagicLen)
	if _, err := io.ReadFull(f, magic); err != nil {
		return false
	}
	return packed.IsPacked(magic)
}

// openPacked opens the packed book at path for o.
func openPacked(path string, o *Options) (*Book, error) {
	if !o.ReadOnly {
		return nil, fmt.Errorf("open book %s: %w: it is a packed book, which is never written (jobs write Pebble books; `c4book book pack` makes a packed one of a finished book)", path, ErrReadOnly)
	}
	f, err := packed.Open(path)
	if err != nil {
		return nil, packedError(err)
	}
	b, err := FromPacked(f, o.Board)
	if err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

// FromPacked returns a read-only Book reading the open packed book f (a
// file, or bytes embedded in a program: packed.OpenBytes); closing it
// closes f. With want set, a packed book of another board is
// ErrBoardMismatch.
func FromPacked(f *packed.File, want *solver.Board) (*Book, error) {
	if want != nil && !want.Equal(f.Board()) {
		return nil, fmt.Errorf("open book %s: %w: the book holds %v positions, not %v", f.Path(), ErrBoardMismatch, f.Board(), want)
	}
	return &Book{pk: f, board: f.Board(), path: f.Path(), readOnly: true}, nil
}

// Packed returns the packed file b reads, or nil if b is a Pebble book.
func (b *Book) Packed() *packed.File { return b.pk }

// packedError wraps an error of a packed file in the package's sentinel
// errors: damage is ErrCorrupt, a newer format ErrNewerFormat, a file that
// is not one ErrNotBook.
func packedError(err error) error {
	switch {
	case errors.Is(err, packed.ErrDamaged):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case errors.Is(err, packed.ErrNewerFormat):
		return fmt.Errorf("%w: %w", ErrNewerFormat, err)
	case errors.Is(err, packed.ErrNotPacked):
		return fmt.Errorf("%w: %w", ErrNotBook, err)
	}
	return err
}

// packedGet is get of a packed book.
func (b *Book) packedGet(depth int, key uint64) (Value, bool, error) {
	score, ok, err := b.pk.GetKey(depth, key)
	if err != nil || !ok {
		return Value{}, false, packedError(err)
	}
	return b.packedValue(depth, key, score), true, nil
}

// packedValue returns the Value of a packed book's position (see # Packed
// books for its origin).
func (b *Book) packedValue(depth int, key uint64, score int) Value {
	v := Value{Score: score, Origin: OriginDerived}
	if depth == b.pk.Depth() {
		if p, err := b.board.PositionFromKey(key); err == nil && !p.CanWinNext() && !p.IsFull() {
			v.Origin = OriginSolved
		}
	}
	return v
}

// packedScan is scanIn of a packed book: it walks the book's set (see
// setWalker) and gives fn the key and value bytes of each position of
// depths minDepth..maxDepth, in key order, as a Pebble book stores them.
func (b *Book) packedScan(minDepth, maxDepth int, fn func(k, v []byte) error) error {
	minDepth = max(minDepth, b.pk.RootStones())
	maxDepth = min(maxDepth, b.pk.Depth())
	if minDepth > maxDepth {
		return nil
	}
	w, err := newSetWalker(b.board, os.TempDir(), DefaultDigestMemKeys)
	if err != nil {
		return err
	}
	defer w.close()
	root, err := b.board.Parse(b.pk.Root())
	if err != nil {
		return err
	}
	var kbuf [positionKeyLen]byte
	var vbuf []byte
	return w.walk(b.pk.Root(), root, maxDepth, func(d int, key, _ uint64) error {
		if d < minDepth {
			return nil
		}
		v, ok, err := b.packedGet(d, key)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: packed book %s: position of %d stones, key %#x, of its set is not in it", ErrCorrupt, b.path, d, key)
		}
		k := AppendKey(kbuf[:0], d, key)
		if vbuf, err = AppendValue(vbuf[:0], v); err != nil {
			return err
		}
		return fn(k, vbuf)
	})
}

// packedDepthRange is DepthRange of a packed book.
func (b *Book) packedDepthRange() (lo, hi int, ok bool) {
	return b.pk.RootStones(), b.pk.Depth(), b.pk.Positions() > 0
}

// packedJob returns the one job of a packed book: its root and depth,
// done.
func (b *Book) packedJob() Job {
	var solved int64
	for _, lv := range b.pk.Levels() {
		if lv.Stones == b.pk.Depth() {
			solved = int64(lv.Stored + lv.LoseNext)
		}
	}
	id := fmt.Sprintf("%v-d%d", b.board, b.pk.Depth())
	if r := b.pk.Root(); r != "" {
		id = fmt.Sprintf("%v-%s-d%d", b.board, r, b.pk.Depth())
	}
	return Job{ID: id, Root: b.pk.Root(), Depth: b.pk.Depth(), State: JobDone, Planned: int64(b.pk.Positions()),
		Solved: solved, Derived: int64(b.pk.Positions()) - solved, Message: "packed book"}
}

// packedStats is Stats of a packed book, from its header: it reads no
// entry.
func (b *Book) packedStats() Stats {
	st := Stats{Board: b.board.String(), FormatVersion: FormatVersion, Jobs: 1}
	for _, lv := range b.pk.Levels() {
		ds := DepthStats{Depth: lv.Stones, Entries: int64(lv.Positions), AtOnce: int64(lv.WinNow)}
		if lv.Stones == b.pk.Depth() {
			ds.ByOrigin[OriginSolved] = int64(lv.Stored + lv.LoseNext)
			ds.ByOrigin[OriginDerived] = int64(lv.WinNow)
		} else {
			ds.ByOrigin[OriginDerived] = int64(lv.Positions)
		}
		if ds.Entries == 0 {
			continue
		}
		st.Entries += ds.Entries
		st.AtOnce += ds.AtOnce
		for o := range ds.ByOrigin {
			st.ByOrigin[o] += ds.ByOrigin[o]
		}
		st.Depths = append(st.Depths, ds)
	}
	st.DiskBytes = uint64(b.pk.Size())
	st.TableBytes = st.DiskBytes
	return st
}
