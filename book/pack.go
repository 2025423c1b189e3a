package book

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/c4book/c4book/book/packed"
)

// PackReport says what Pack wrote.
type PackReport struct {
	Digest Digest              // of the set packed, from the book's scores: the file's header holds it
	Levels []packed.LevelStats // what each level of the file holds
	Bytes  int64               // the file's size
}

// Pack writes to w the packed book (package packed) of the positions
// under root with at most depth stones: every position of the set a
// digest of root and depth covers, with its score in b. A position of the
// set that b lacks ends it with a *MissingError naming the first one in
// the set's order, before anything is written: a packed book is whole. A
// score the rules contradict (a win at once scored otherwise) ends it too:
// b is wrong. The positions are enumerated and looked up as Digest does
// (opts as for a digest: TempDir, MemKeys and Progress), so the report's
// digest is b's digest of root and depth.
//
// The file is built in memory, a level at a time: about 10 bytes for each
// position of the largest level whose score is coded, and the file's
// size, then written to w.
func (b *Book) Pack(ctx context.Context, w io.Writer, root string, depth int, opts *DigestOptions) (PackReport, error) {
	o, r, err := b.digestSetup(root, depth, opts)
	if err != nil {
		return PackReport{}, err
	}
	if b.pk != nil && b.pk.Root() == root && b.pk.Depth() == depth {
		return PackReport{}, fmt.Errorf("pack: book %s is already the packed book of root %q and depth %d", b.path, root, depth)
	}
	builder, err := packed.NewBuilder(packed.Spec{Board: b.board, Root: root, Depth: depth})
	if err != nil {
		return PackReport{}, err
	}
	dg, err := b.newDigester(o, new(atomic.Int64))
	if err != nil {
		return PackReport{}, err
	}
	defer dg.close()
	var n int64
	err = dg.walker.walk(root, r, depth, func(d int, key, path uint64) error {
		v, ok, err := dg.book.GetEntry(d, key)
		if err != nil {
			return err
		}
		if !ok {
			return dg.walker.missing(d, key, path)
		}
		if err := builder.Add(d, key, v.Score); err != nil {
			return err
		}
		if n++; n%digestProgressEvery == 0 {
			if o.Progress != nil {
				o.Progress(n)
			}
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return PackReport{}, err
	}
	size, err := builder.WriteTo(w)
	if err != nil {
		return PackReport{}, err
	}
	return PackReport{Digest: Digest{Sum: builder.Digest(), Positions: n}, Levels: builder.Stats(), Bytes: size}, nil
}
