// Package books holds the packed books that ship with c4book (package
// book/packed): the exact score of every position of a board up to a
// depth, embedded in every program that imports this package, read in
// place from the program's own memory. c4book serve and c4book solve read
// the deepest one of their board when no --book is given; a Go program
// opens one with Deepest and book.FromPacked.
//
// The files are those of this directory; its README.md says how each was
// made and checked.
package books

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/packed"
	"github.com/c4book/c4book/solver"
)

//go:embed *.c4pack
var files embed.FS

// Shipped is one packed book shipped with c4book.
type Shipped struct {
	Name  string        // the file's name in this directory
	Board *solver.Board // the board of its positions
	Root  string        // its root; "" for the empty board
	Depth int           // the most stones of its positions
	data  []byte
}

// Open returns the shipped book, read in place: the file's bytes are the
// program's own, never copied.
func (s Shipped) Open() (*packed.File, error) {
	return packed.OpenBytes(s.Name+" (shipped with c4book)", s.data)
}

// All returns the shipped books, by board (width, then height), then by
// depth.
func All() ([]Shipped, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var all []Shipped
	for _, e := range entries {
		data, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		f, err := packed.OpenBytes(e.Name(), data)
		if err != nil {
			return nil, fmt.Errorf("shipped book %s: %w", e.Name(), err)
		}
		all = append(all, Shipped{Name: e.Name(), Board: f.Board(), Root: f.Root(), Depth: f.Depth(), data: data})
		f.Close()
	}
	slices.SortFunc(all, func(a, b Shipped) int {
		if a.Board.Width() != b.Board.Width() {
			return a.Board.Width() - b.Board.Width()
		}
		if a.Board.Height() != b.Board.Height() {
			return a.Board.Height() - b.Board.Height()
		}
		return a.Depth - b.Depth
	})
	return all, nil
}

// Deepest returns the deepest shipped book of board b whose root is the
// empty board, and false if none is shipped for b.
func Deepest(b *solver.Board) (Shipped, bool, error) {
	all, err := All()
	if err != nil {
		return Shipped{}, false, err
	}
	var best Shipped
	found := false
	for _, s := range all {
		if s.Board.Equal(b) && s.Root == "" && (!found || s.Depth > best.Depth) {
			best, found = s, true
		}
	}
	return best, found, nil
}

// Open returns the deepest shipped book of board b (Deepest) as a
// read-only book.Book, and an error if none is shipped for b.
func Open(b *solver.Board) (*book.Book, error) {
	s, ok, err := Deepest(b)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no book ships for the %v board", b)
	}
	f, err := s.Open()
	if err != nil {
		return nil, err
	}
	bk, err := book.FromPacked(f, b)
	if err != nil {
		f.Close()
		return nil, err
	}
	return bk, nil
}
