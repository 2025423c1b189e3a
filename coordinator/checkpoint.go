package coordinator

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// # Checkpoint file
//
// The scores of a job's solved leaves, small enough to carry a half-built
// job to another machine: one byte a leaf, in the job's order, the leaves
// themselves named by the plan rather than written out. The plan of a job
// made on an empty book is always the same, so a checkpoint restored into
// a new book, planned again, names the same leaves; its plan digest says
// so, and a plan that differs is refused. All integers are big-endian.
//
//	 byte 0          7   8         9       10       11      12       13
//	+------------------+---------+-------+--------+-------+--------+------------+
//	|      magic       | version | width | height | depth | rootLen | root moves |
//	+------------------+---------+-------+--------+-------+--------+------------+
//	 0x89 "C4LEAF" 0x0A                                    rootLen bytes, "1".."9"
//
//	+-----------------+--------------------------+------------------------+
//	| leaves, uint64  |  plan digest, 32 bytes   |  one byte a leaf ...   |
//	+-----------------+--------------------------+------------------------+
//
//	magic:   checkpointMagic; as the binary book file's, its first byte
//	         is not ASCII.
//	version: checkpointVersion (1); another is refused.
//	width, height, depth, root: the job's (Spec).
//	leaves:  the number of the plan's leaves: the bytes that follow.
//	plan digest: SHA-256 of the plan's leaves, each canonical key as a
//	         uint64 in key order, then the index of each leaf in the job's
//	         order as a uint64 (see planDigest).
//	a leaf:  0 if the book did not hold it, or its exact score minus
//	         solver.MinScore plus 1 (1..65), in the job's order: leaves
//	         solved together lie together, and the file compresses well
//	         (xz, zstd).

const (
	checkpointMagic   = "\x89C4LEAF\n"
	checkpointVersion = 1
	// checkpointBatch is how many entries a restore writes at once.
	checkpointBatch = 10_000
)

// CheckpointBook is the part of a book a checkpoint reads or writes.
type CheckpointBook interface {
	PlanBook
	Job(id string) (book.Job, bool, error)
}

// CheckpointStats counts a checkpoint's leaves.
type CheckpointStats struct {
	Leaves int64 // the leaves of the job's plan
	Held   int64 // of them, those whose scores the checkpoint holds
	// Written: of Held, the entries a restore wrote (the others the book
	// held already, with the same score).
	Written int64
}

// SaveCheckpoint writes to w the checkpoint of job spec, whose plan is in
// dir: the scores the book holds of its leaves; with solvedOnly, only
// those solved in it, not those a restore imported (the checkpoint of a
// session, beside the one restored before it). It keeps one byte a leaf
// in memory.
func SaveCheckpoint(ctx context.Context, spec Spec, bk CheckpointBook, dir string, w io.Writer, solvedOnly bool) (CheckpointStats, error) {
	var st CheckpointStats
	if _, err := spec.Validate(); err != nil {
		return st, err
	}
	leaves, err := openPlanLeaves(spec, bk, dir)
	if err != nil {
		return st, err
	}
	defer leaves.Close()
	st.Leaves = leaves.Len()
	scores := make([]byte, leaves.Len()) // by key index
	next, stop := iter.Pull2(bk.Entries(spec.Depth, spec.Depth))
	defer stop()
	e, eerr, ok := next()
	sc := leaves.keys.Scan(0, leaves.Len())
	for sc.Next() {
		for ok && eerr == nil && e.Key < sc.Key() {
			e, eerr, ok = next()
		}
		if eerr != nil {
			return st, eerr
		}
		if ok && e.Key == sc.Key() && (!solvedOnly || e.Origin == book.OriginSolved) {
			scores[sc.Index()] = byte(e.Score - solver.MinScore + 1)
			st.Held++
		}
		if sc.Index()%(1<<20) == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	sum, err := planDigest(leaves)
	if err != nil {
		return st, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.Write(checkpointHeader(spec, st.Leaves, sum)); err != nil {
		return st, err
	}
	err = leaves.eachInOrder(func(i int64) error { return bw.WriteByte(scores[i]) })
	if err != nil {
		return st, err
	}
	return st, bw.Flush()
}

// RestoreCheckpoint reads a checkpoint from r and writes its scores to the
// book as imported entries, for the job of its header, whose plan it makes
// in plansDir (see PlansDir) if the book has none: the job then solves
// only the leaves the checkpoint does not hold. The plan must be the
// checkpoint's: restore into a new book, or one that holds the job's plan
// made before any of its leaves were solved. A score the book holds
// otherwise is an error, and nothing of the checkpoint is written. It
// returns the job's spec, read from the header, with the board of board.
func RestoreCheckpoint(ctx context.Context, board *solver.Board, bk CheckpointBook, plansDir string, r io.Reader, opts *PlanOptions) (Spec, CheckpointStats, error) {
	var st CheckpointStats
	br := bufio.NewReaderSize(r, 1<<16)
	spec, n, sum, err := readCheckpointHeader(br, board)
	if err != nil {
		return spec, st, err
	}
	id := spec.ID()
	if rec, ok, err := bk.Job(id); err != nil {
		return spec, st, err
	} else if ok && rec.State == book.JobDone {
		return spec, st, fmt.Errorf("job %s is complete in this book: nothing to restore", id)
	}
	dir := filepath.Join(plansDir, id)
	if _, err := MakePlan(ctx, spec, bk, dir, opts); err != nil {
		return spec, st, fmt.Errorf("planning job %s: %w", id, err)
	}
	leaves, err := openLeaves(dir)
	if err != nil {
		return spec, st, err
	}
	defer leaves.Close()
	st.Leaves = leaves.Len()
	have, err := planDigest(leaves)
	if err != nil {
		return spec, st, err
	}
	if leaves.Len() != n || have != sum {
		return spec, st, fmt.Errorf("the plan of job %s in this book (%d leaves) is not the checkpoint's (%d leaves): "+
			"the book held some of the job's leaves when it was planned, or another version planned it; restore into a new book", id, leaves.Len(), n)
	}
	scores := make([]byte, n) // by key index
	var at int64
	err = leaves.eachInOrder(func(i int64) error {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("checkpoint: truncated after %d of %d leaves", at, n)
		}
		if err != nil {
			return err
		}
		if b > solver.MaxScore-solver.MinScore+1 {
			return fmt.Errorf("checkpoint: leaf %d: byte %d is no score", at, b)
		}
		scores[i] = b
		at++
		return nil
	})
	if err != nil {
		return spec, st, err
	}
	if _, err := br.ReadByte(); err == nil {
		return spec, st, fmt.Errorf("checkpoint: more than the %d leaves of its header", n)
	}
	// Every score is checked against the book before any is written.
	if err := checkpointEntries(spec, bk, leaves, scores, nil); err != nil {
		return spec, st, err
	}
	batch := make([]book.Entry, 0, checkpointBatch)
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := bk.PutBatch(batch); err != nil {
			return err
		}
		st.Written += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	err = checkpointEntries(spec, bk, leaves, scores, func(e book.Entry) error {
		st.Held++
		if e.Origin == 0 {
			return nil // held by the book already
		}
		batch = append(batch, e)
		if len(batch) == checkpointBatch {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	return spec, st, err
}

// checkpointEntries calls each, if not nil, with the entry of each score
// of scores (by key index), in key order: an imported entry, or one of
// origin 0 when the book holds it already. A score the book holds
// otherwise is an error.
func checkpointEntries(spec Spec, bk PlanBook, leaves *jobLeaves, scores []byte, each func(book.Entry) error) error {
	next, stop := iter.Pull2(bk.Entries(spec.Depth, spec.Depth))
	defer stop()
	e, eerr, ok := next()
	sc := leaves.keys.Scan(0, leaves.Len())
	for sc.Next() {
		b := scores[sc.Index()]
		if b == 0 {
			continue
		}
		out := book.Entry{Depth: spec.Depth, Key: sc.Key(), Value: book.Value{Score: int(b) - 1 + solver.MinScore, Origin: book.OriginImported}}
		for ok && eerr == nil && e.Key < sc.Key() {
			e, eerr, ok = next()
		}
		if eerr != nil {
			return eerr
		}
		if ok && e.Key == sc.Key() {
			if e.Score != out.Score {
				return fmt.Errorf("leaf %#x: the book holds score %d, the checkpoint %d: nothing restored", e.Key, e.Score, out.Score)
			}
			out.Origin = 0
		}
		if each != nil {
			if err := each(out); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// openPlanLeaves opens the leaves of job spec's plan in dir, with an error
// that says so when the book has no such plan.
func openPlanLeaves(spec Spec, bk CheckpointBook, dir string) (*jobLeaves, error) {
	leaves, err := openLeaves(dir)
	if err == nil {
		return leaves, nil
	}
	rec, ok, jerr := bk.Job(spec.ID())
	switch {
	case jerr != nil:
		return nil, jerr
	case ok && rec.State == book.JobDone:
		return nil, fmt.Errorf("job %s is complete: it has no plan left, and its book is the checkpoint", spec.ID())
	case ok && rec.State == book.JobPlanning:
		return nil, fmt.Errorf("job %s is still planning: run it until it solves, then checkpoint it", spec.ID())
	case !ok:
		return nil, fmt.Errorf("no job %s in this book: nothing to checkpoint (check --depth and --root)", spec.ID())
	}
	return nil, err
}

// eachInOrder calls fn with the key index of each leaf, in the job's order.
func (l *jobLeaves) eachInOrder(fn func(i int64) error) error {
	if l.order == nil {
		for i := range l.Len() {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	sc := l.order.Scan(0, l.order.Len())
	for sc.Next() {
		if err := fn(int64(sc.Key())); err != nil {
			return err
		}
	}
	return sc.Err()
}

// planDigest returns the SHA-256 of the leaves' keys in key order, then
// of their indexes in the job's order (none in a plan made before
// orders), each a uint64 big-endian.
func planDigest(l *jobLeaves) ([32]byte, error) {
	h := sha256.New()
	var buf [8]byte
	sc := l.keys.Scan(0, l.Len())
	for sc.Next() {
		binary.BigEndian.PutUint64(buf[:], sc.Key())
		h.Write(buf[:])
	}
	if err := sc.Err(); err != nil {
		return [32]byte{}, err
	}
	if l.order != nil {
		oc := l.order.Scan(0, l.order.Len())
		for oc.Next() {
			binary.BigEndian.PutUint64(buf[:], oc.Key())
			h.Write(buf[:])
		}
		if err := oc.Err(); err != nil {
			return [32]byte{}, err
		}
	}
	return [32]byte(h.Sum(nil)), nil
}

// checkpointHeader returns the header of a checkpoint of spec.
func checkpointHeader(spec Spec, leaves int64, sum [32]byte) []byte {
	b := []byte(checkpointMagic)
	b = append(b, checkpointVersion, byte(spec.Board.Width()), byte(spec.Board.Height()), byte(spec.Depth), byte(len(spec.Root)))
	b = append(b, spec.Root...)
	b = binary.BigEndian.AppendUint64(b, uint64(leaves))
	return append(b, sum[:]...)
}

// readCheckpointHeader reads a checkpoint's header, checking its board
// against board.
func readCheckpointHeader(r io.Reader, board *solver.Board) (spec Spec, leaves int64, sum [32]byte, err error) {
	var fixed [len(checkpointMagic) + 5]byte
	if _, err := io.ReadFull(r, fixed[:len(checkpointMagic)]); err != nil || !bytes.Equal(fixed[:len(checkpointMagic)], []byte(checkpointMagic)) {
		return spec, 0, sum, errors.New("not a checkpoint file (c4book book checkpoint writes them)")
	}
	if _, err := io.ReadFull(r, fixed[len(checkpointMagic):]); err != nil {
		return spec, 0, sum, fmt.Errorf("checkpoint: header: %w", noEOF(err))
	}
	h := fixed[len(checkpointMagic):]
	if h[0] != checkpointVersion {
		return spec, 0, sum, fmt.Errorf("checkpoint: version %d: this version of c4book reads version %d", h[0], checkpointVersion)
	}
	if int(h[1]) != board.Width() || int(h[2]) != board.Height() {
		return spec, 0, sum, fmt.Errorf("checkpoint of a %dx%d board, the book's is %v", h[1], h[2], board)
	}
	root := make([]byte, h[4])
	var tail [8 + 32]byte
	if _, err := io.ReadFull(r, root); err != nil {
		return spec, 0, sum, fmt.Errorf("checkpoint: header: %w", noEOF(err))
	}
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return spec, 0, sum, fmt.Errorf("checkpoint: header: %w", noEOF(err))
	}
	spec = Spec{Board: board, Root: string(root), Depth: int(h[3]), TaskSize: 1}
	if _, err := spec.Validate(); err != nil {
		return spec, 0, sum, fmt.Errorf("checkpoint: %w", err)
	}
	n := binary.BigEndian.Uint64(tail[:8])
	if n > 1<<40 {
		return spec, 0, sum, fmt.Errorf("checkpoint: %d leaves", n)
	}
	return spec, int64(n), [32]byte(tail[8:]), nil
}

// noEOF turns an end of file into io.ErrUnexpectedEOF: a header cut short.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
