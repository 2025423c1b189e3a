package book

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/c4book/c4book/solver"
)

// VerifyOptions says what Verify checks. A nil *VerifyOptions is valid: it
// checks every entry against its children and re-solves nothing.
type VerifyOptions struct {
	// Solver re-solves the sampled entries. Nil: no entry is re-solved.
	Solver *solver.Solver

	// Sample is the number of entries, chosen at random among those at
	// SampleMinDepth or deeper, that are re-solved with Solver: a sample
	// stratified over who scored them and over depth (see resolve.go).
	// With Solved, the sample is drawn from the entries not solved by a
	// worker. The default value is 0.
	Sample int

	// SampleMinDepth keeps shallow positions, the slow ones to solve on a
	// large board, out of the sample, and out of the entries Solved
	// re-solves. The default value is 0.
	SampleMinDepth int

	// Solved re-solves every entry a worker solved (at SampleMinDepth or
	// deeper): every check a book can have, at about the CPU its job
	// spent solving. The default value is false.
	Solved bool

	// Threads is the number of entries re-solved at once, by solvers
	// sharing Solver's table. The default value, 0, means 1.
	Threads int

	// Progress, if set, is called once with 0 when the re-solving begins
	// (after the whole book is read), then after each entry re-solved with
	// the number re-solved so far and the number to re-solve in all, from
	// the goroutines that solve: it must be quick and safe for concurrent
	// use.
	Progress func(resolved, total int64)

	// Seed seeds the choice of the sample, so that a run can be repeated.
	// The default value is 0.
	Seed uint64

	// Log receives one line per problem found, as it is found. The default
	// value (nil) discards them.
	Log io.Writer

	// MaxProblems bounds the problems kept in the report (all are counted
	// and logged). The default value is 1000.
	MaxProblems int
}

// VerifyReport says what Verify checked and what it found.
type VerifyReport struct {
	Entries       int64     // entries read
	Corrupt       int64     // entries that cannot be decoded or are not positions of the board
	ChildChecked  int64     // entries compared with the negamax of their children
	ChildSkipped  int64     // entries with a child missing from the book: not compared
	Resolved      int64     // entries re-solved with the solver
	SolvedEntries int64     // entries solved by a worker, at the sample's least depth or deeper
	Disagreements int64     // entries whose stored score is wrong: by children or solver
	Problems      []Problem // the first MaxProblems problems: corrupt entries and disagreements
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return r.Corrupt == 0 && r.Disagreements == 0 }

// Problem is one entry that failed a check.
type Problem struct {
	Key    []byte // raw key of the entry
	Moves  string // a move string reaching the position, if it could be decoded
	Check  string // "corrupt", "children" or "solver"
	Stored int    // stored score (not for "corrupt")
	Want   int    // score by the check (not for "corrupt")
	Detail string // what is wrong, for "corrupt"
}

func (p Problem) String() string {
	if p.Check == "corrupt" && p.Key == nil {
		return "corrupt: " + p.Detail
	}
	if p.Check == "corrupt" {
		return fmt.Sprintf("corrupt: key %s: %s", FormatKey(p.Key), p.Detail)
	}
	return fmt.Sprintf("%s: %q (key %s): stored %d, want %d", p.Check, p.Moves, FormatKey(p.Key), p.Stored, p.Want)
}

// Verify checks the book and reports every problem:
//
//   - every entry decodes, and is the canonical key of a position of its
//     depth with a score possible at that depth;
//   - every entry whose children are all in the book (or are immediate
//     wins or full boards) equals the negamax of its children's scores; an
//     entry whose player to move wins at once equals WinNowScore;
//   - opts.Sample entries chosen at random, and with opts.Solved every
//     solved entry, equal the solver's score.
//
// It reads the book once, depth by depth, looking up the children of each
// entry. It returns an error only if reading fails or ctx is done; what it
// finds is in the report.
func (b *Book) Verify(ctx context.Context, opts *VerifyOptions) (VerifyReport, error) {
	var o VerifyOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxProblems <= 0 {
		o.MaxProblems = 1000
	}
	if o.Solver == nil {
		o.Sample, o.Solved = 0, false
	}
	if o.Solver != nil {
		if err := b.checkBoard(o.Solver.Board()); err != nil {
			return VerifyReport{}, err
		}
	}
	var (
		r  VerifyReport
		mu sync.Mutex // r, once solvers run
	)
	report := func(p Problem) {
		mu.Lock()
		defer mu.Unlock()
		if p.Check == "corrupt" {
			r.Corrupt++
		} else {
			r.Disagreements++
		}
		if len(r.Problems) < o.MaxProblems {
			r.Problems = append(r.Problems, p)
		}
		if o.Log != nil {
			fmt.Fprintln(o.Log, p)
		}
	}
	// A packed book: every block against its checksum first, and the
	// scores read against the digest its header holds, hashed as the scan
	// reads the set in the digest's order.
	var packedSum hash.Hash
	if b.pk != nil {
		if err := b.pk.Check(); err != nil {
			report(Problem{Check: "corrupt", Detail: err.Error() + ": no score of the file is read"})
			return r, nil
		}
		packedSum = sha256.New()
	}
	sample := newStratifiedSample(o.Sample, rand.New(rand.NewPCG(o.Seed, 0x5eed)))
	// Children are looked up past the damaged files met so far.
	damaged := &damagedFiles{}
	look := damagedLookup{b, damaged}

	check := func(k, v []byte) error {
		r.Entries++
		if r.Entries%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e, err := b.decodeEntry(k, v)
		if err != nil {
			detail := err.Error()
			if ce, ok := errors.AsType[*CorruptError](err); ok {
				detail = ce.Reason
			}
			report(Problem{Key: append([]byte(nil), k...), Check: "corrupt", Detail: detail})
			return nil
		}
		if packedSum != nil {
			var rec [digestRecordLen]byte
			binary.BigEndian.PutUint64(rec[:8], e.Key)
			rec[8] = byte(int8(e.Score))
			packedSum.Write(rec[:])
		}
		p, _ := b.board.PositionFromKey(e.Key) // valid: decodeEntry checked it
		want, complete, err := b.childrenScore(look, p)
		if err != nil {
			return err
		}
		if !complete {
			r.ChildSkipped++
		} else {
			r.ChildChecked++
			if want != e.Score {
				moves, _ := p.MoveString()
				report(Problem{Key: append([]byte(nil), k...), Moves: moves, Check: "children", Stored: e.Score, Want: want})
			}
		}
		if e.Depth < o.SampleMinDepth || ruled(&p) {
			return nil
		}
		if e.Origin == OriginSolved {
			r.SolvedEntries++
		}
		if o.Sample > 0 && !(o.Solved && e.Origin == OriginSolved) {
			sample.offer(e)
		}
		return nil
	}
	// A damaged file is reported, and the other files are read.
	reportFile := func(fe *FileCorruptError) {
		damaged.add(fe)
		report(Problem{Key: fe.Start, Check: "corrupt", Detail: fmt.Sprintf("%v: the entries it holds are not checked", fe)})
	}
	all := [2][]byte{{0}, {byte(b.board.Cells() + 1)}}
	if err := b.scanPast(all[0], all[1], check, reportFile); err != nil {
		if errors.Is(err, ErrCorrupt) && b.pk != nil {
			// A damaged block ends a packed book's scan.
			report(Problem{Check: "corrupt", Detail: err.Error()})
			return r, nil
		}
		return r, err
	}
	if packedSum != nil {
		if got, want := packedSum.Sum(nil), b.pk.Digest(); !bytes.Equal(got, want[:]) {
			report(Problem{Check: "corrupt", Detail: fmt.Sprintf("the scores read give the digest %x, the file's header says %x: the file is not the book it was packed from", got, want)})
		}
	}
	if o.Solver == nil {
		return r, nil
	}

	// Re-solving.
	chosen := sample.choose()
	total := int64(len(chosen))
	if o.Solved {
		total += r.SolvedEntries
	}
	if o.Progress != nil {
		o.Progress(0, total)
	}
	done := func(e Entry, p solver.Position, score int) {
		mu.Lock()
		r.Resolved++
		n := r.Resolved
		mu.Unlock()
		if score != e.Score {
			moves, _ := p.MoveString()
			report(Problem{Key: AppendKey(nil, e.Depth, e.Key), Moves: moves, Check: "solver", Stored: e.Score, Want: score})
		}
		if o.Progress != nil {
			o.Progress(n, total)
		}
	}
	entries := func(yield func(Entry) bool) error {
		for _, e := range chosen {
			if !yield(e) {
				return nil
			}
		}
		if !o.Solved {
			return nil
		}
		// Every solved entry, read again; what cannot be decoded was
		// reported by the scan above.
		err := b.scanPast(all[0], all[1], func(k, v []byte) error {
			e, err := b.decodeEntry(k, v)
			if err != nil || e.Origin != OriginSolved || e.Depth < o.SampleMinDepth {
				return nil
			}
			if p, _ := b.board.PositionFromKey(e.Key); ruled(&p) {
				return nil
			}
			if !yield(e) {
				return errStop
			}
			return nil
		}, func(*FileCorruptError) {})
		if err == errStop {
			return nil
		}
		return err
	}
	if err := resolveAll(ctx, o.Solver, max(o.Threads, 1), entries, done); err != nil {
		return r, err
	}
	return r, nil
}

// ruled reports whether the score of p is given by the rules alone: the
// game is over, or its player to move makes four at once.
func ruled(p *solver.Position) bool {
	_, ok := p.RuleScore()
	return ok
}

// childrenScore returns the score of p from its children in g, and false
// if a child is missing or cannot be decoded (it is reported when the scan
// reaches it). A position whose player to move makes four at once scores
// WinNowScore without looking at its children; a finished game scores as
// lost or drawn.
func (b *Book) childrenScore(g Lookup, p solver.Position) (int, bool, error) {
	if s, ok := p.RuleScore(); ok {
		return s, true, nil
	}
	best, seen := 0, false
	for col := range p.Children() {
		m, found, err := childScore(g, p, col)
		switch {
		case errors.Is(err, ErrCorrupt): // a bad record or file
			return 0, false, nil
		case err != nil:
			return 0, false, err
		case !found:
			return 0, false, nil
		}
		if !seen || m.Score > best {
			best, seen = m.Score, true
		}
	}
	return best, seen, nil
}
