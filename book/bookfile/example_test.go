package bookfile_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/solver"
)

// A solver seeded with a book loaded into memory: here from a binary
// export (c4book book export --format bin), as a program without the
// book's database would; book.Load reads an open book the same way. One
// Loaded serves any number of solvers, each with an oracle of its own.
func ExampleLoadBinary() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A book of the 5x4 board: every position of 2 stones, solved, and
	// its binary export.
	board := solver.MustBoard(5, 4)
	bk, err := book.Open(filepath.Join(dir, "5x4.db"), &book.Options{Create: true, Board: board})
	if err != nil {
		log.Fatal(err)
	}
	defer bk.Close()
	s, err := solver.New(board, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	var entries []book.Entry
	for _, first := range board.NewPosition().Children() {
		for _, p := range first.Children() {
			entries = append(entries, book.EntryOf(p, book.Value{Score: s.Solve(p), Origin: book.OriginSolved}))
		}
	}
	if err := bk.PutBatch(entries); err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := bookfile.ExportBinary(bk, &file, 0, board.Cells()); err != nil {
		log.Fatal(err)
	}

	// Load the file and solve the empty board with it as oracle.
	loaded, err := bookfile.LoadBinary(&file)
	if err != nil {
		log.Fatal(err)
	}
	seeded, err := solver.New(loaded.Board(), 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	oracle := loaded.NewOracle()
	if err := oracle.Attach(seeded); err != nil {
		log.Fatal(err)
	}
	score := seeded.Solve(board.NewPosition())
	_, found := oracle.Lookups()
	fmt.Println("positions loaded:", loaded.Len())
	fmt.Println("score of the empty 5x4 board:", score)
	fmt.Println("the book answered:", found > 0)
	// Output:
	// positions loaded: 13
	// score of the empty 5x4 board: 0
	// the book answered: true
}
