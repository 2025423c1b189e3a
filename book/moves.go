package book

import (
	"fmt"

	"github.com/c4book/c4book/solver"
)

// Source says where the score of a move came from.
type Source uint8

// Sources of move scores.
const (
	FromBook   Source = iota + 1 // the child's entry in the book
	FromSolver                   // the solver, the child not being in the book
	FromRule                     // the move makes four, or fills the board
)

// String returns "book", "solver" or "rule".
func (s Source) String() string {
	switch s {
	case FromBook:
		return "book"
	case FromSolver:
		return "solver"
	case FromRule:
		return "rule"
	}
	return fmt.Sprintf("source(%d)", uint8(s))
}

// MoveScore is the score of one move of a position: the score of the
// position if that column is played, from the point of view of the player
// who plays it.
type MoveScore struct {
	Col   int    // 0-based column index, as solver.Position.Play takes it; Column() is its number
	Score int    // score of the position after playing Col, for its player
	From  Source // where Score came from
}

// Column returns the number of the move's column as move strings write
// it: 1 to the board's width, from the left.
func (m MoveScore) Column() int { return m.Col + 1 }

// MoveScores returns the score of every playable column of p: a column
// that makes four scores WinNowScore; one that fills the board without a
// four scores 0; any other scores minus its child's score, read from the
// book or, when the child is not in the book, from s. With a nil solver a
// child missing from the book is an error wrapping ErrNotInBook. A position
// whose game is over has no moves: the result is empty.
func (b *Book) MoveScores(p solver.Position, s *solver.Solver) ([]MoveScore, error) {
	if err := b.checkBoard(p.Board()); err != nil {
		return nil, err
	}
	if p.Over() {
		return nil, nil
	}
	var scores []MoveScore
	for col := range p.Children() {
		m, err := b.moveScore(p, col, s)
		if err != nil {
			return nil, err
		}
		scores = append(scores, m)
	}
	return scores, nil
}

// MoveScore returns the score of playing column col (0-based) of p from
// the rules (a move that makes four, or fills the board) or from the book,
// and false when the book does not hold the child. It is an error if the
// game of p is over or col cannot be played. Unlike MoveScores it never
// solves: the caller decides what to do about a missing child.
func (b *Book) MoveScore(p solver.Position, col int) (MoveScore, bool, error) {
	return playableScore(b.board, b, p, col)
}

// MoveScore is Book.MoveScore, looking the child up with r.
func (r *Reader) MoveScore(p solver.Position, col int) (MoveScore, bool, error) {
	return playableScore(r.book.board, r, p, col)
}

// MoveScore is Book.MoveScore, looking the child up in l.
func (l *Loaded) MoveScore(p solver.Position, col int) (MoveScore, bool, error) {
	return playableScore(l.board, l, p, col)
}

// playableScore is MoveScore of a book of board, with the lookups made by
// g.
func playableScore(board *solver.Board, g Lookup, p solver.Position, col int) (MoveScore, bool, error) {
	if !board.Equal(p.Board()) {
		return MoveScore{}, false, fmt.Errorf("%w: position of board %v in a book of %v", ErrBoardMismatch, p.Board(), board)
	}
	if p.Over() {
		return MoveScore{}, false, fmt.Errorf("move score: the game is over\n%v", p)
	}
	if !p.CanPlay(col) {
		return MoveScore{}, false, fmt.Errorf("move score: column %d cannot be played\n%v", col+1, p)
	}
	return childScore(g, p, col)
}

// moveScore returns the score of playing the playable column col of p,
// a position whose game is not over, from the book, the rules or s.
func (b *Book) moveScore(p solver.Position, col int, s *solver.Solver) (MoveScore, error) {
	m, found, err := childScore(b, p, col)
	if err != nil || found {
		return m, err
	}
	child := p
	child.Play(col)
	if s == nil {
		moves, _ := child.MoveString()
		return MoveScore{}, fmt.Errorf("%w: child %q (column %d) and no solver given", ErrNotInBook, moves, col+1)
	}
	return MoveScore{Col: col, Score: -s.Solve(child), From: FromSolver}, nil
}

// childScore returns the score of playing the playable column col of p, a
// position whose game is not over, from the rules or the book (looked up
// with g), and false if the child is not in the book.
func childScore(g Lookup, p solver.Position, col int) (MoveScore, bool, error) {
	if s, ok := p.RuleMoveScore(col); ok {
		return MoveScore{Col: col, Score: s, From: FromRule}, true, nil
	}
	child := p
	child.Play(col)
	v, ok, err := g.GetEntry(child.Moves(), child.CanonicalKey())
	if err != nil || !ok {
		return MoveScore{}, false, err
	}
	return MoveScore{Col: col, Score: -v.Score, From: FromBook}, true, nil
}

// BestMoves returns the columns whose scores give p its score, numbered
// as move strings write them (1 to the board's width, from the left), in
// increasing order, and that score: the highest of MoveScores. A position
// whose game is over has no best move and is an error.
func (b *Book) BestMoves(p solver.Position, s *solver.Solver) (cols []int, score int, err error) {
	scores, err := b.MoveScores(p, s)
	if err != nil {
		return nil, 0, err
	}
	if len(scores) == 0 {
		return nil, 0, fmt.Errorf("best moves: the game is over\n%v", p)
	}
	score = scores[0].Score
	for _, m := range scores {
		switch {
		case m.Score > score:
			score, cols = m.Score, append(cols[:0], m.Column())
		case m.Score == score:
			cols = append(cols, m.Column())
		}
	}
	return cols, score, nil
}
