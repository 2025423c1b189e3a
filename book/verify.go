package book

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/c4book/c4book/solver"
)

// VerifyOptions says what Verify checks. A nil *VerifyOptions is valid: it
// checks every entry against its children and re-solves nothing.
type VerifyOptions struct {
	// Solver re-solves the sampled entries. Nil: no entry is re-solved.
	Solver *solver.Solver

	// Sample is the number of entries, chosen at random among those at
	// SampleMinDepth or deeper, that are re-solved with Solver. The default
	// value is 0.
	Sample int

	// SampleMinDepth keeps shallow positions, the slow ones to solve on a
	// large board, out of the sample. The default value is 0.
	SampleMinDepth int

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
//   - opts.Sample entries chosen at random equal the solver's score.
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
		o.Sample = 0
	}
	if o.Solver != nil {
		if err := b.checkBoard(o.Solver.Board()); err != nil {
			return VerifyReport{}, err
		}
	}
	var r VerifyReport
	report := func(p Problem) {
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

	// Reservoir sampling: after n candidates, each is in the sample with
	// probability Sample/n.
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	var sample []Entry
	var candidates int64

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
		p, _ := b.board.PositionFromKey(e.Key) // valid: decodeEntry checked it
		want, complete, err := b.childrenScore(p)
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
		if o.Sample > 0 && e.Depth >= o.SampleMinDepth {
			candidates++
			if len(sample) < o.Sample {
				sample = append(sample, e)
			} else if j := rng.Int64N(candidates); j < int64(o.Sample) {
				sample[j] = e
			}
		}
		return nil
	}
	// A damaged file is reported, and the other files are read.
	damaged := func(fe *FileCorruptError) {
		report(Problem{Key: fe.Start, Check: "corrupt", Detail: fmt.Sprintf("%v: the entries it holds are not checked", fe)})
	}
	if err := b.scanPast([]byte{0}, []byte{byte(b.board.Cells() + 1)}, check, damaged); err != nil {
		return r, err
	}

	for _, e := range sample {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		p, _ := b.board.PositionFromKey(e.Key)
		r.Resolved++
		if want := o.Solver.Solve(p); want != e.Score {
			moves, _ := p.MoveString()
			report(Problem{Key: AppendKey(nil, e.Depth, e.Key), Moves: moves, Check: "solver", Stored: e.Score, Want: want})
		}
	}
	return r, nil
}

// childrenScore returns the score of p from its children in the book, and
// false if a child is missing or cannot be decoded (it is reported when
// the scan reaches it). A position whose player to move makes four at once
// scores WinNowScore without looking at its children; a finished game
// scores as lost or drawn.
func (b *Book) childrenScore(p solver.Position) (int, bool, error) {
	switch {
	case p.Moves() > 0 && p.LastMoveWon():
		return b.board.LostScore(p.Moves()), true, nil
	case p.IsFull():
		return 0, true, nil
	case p.CanWinNext():
		return b.board.WinNowScore(p.Moves()), true, nil
	}
	best, seen := 0, false
	for col := range p.Children() {
		m, found, err := childScore(b, p, col)
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
