package book_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// A solver seeded with a book: the search asks the book about every
// position it meets with no more stones than the book's deepest, and stops
// there when the book holds it.
func ExampleOracle() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A book of the 5x4 board: every position of 2 stones, solved.
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

	// Solve the empty board with the book as oracle.
	oracle, err := bk.NewOracle()
	if err != nil {
		log.Fatal(err)
	}
	defer oracle.Close()
	seeded, err := solver.New(board, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	if err := oracle.Attach(seeded); err != nil {
		log.Fatal(err)
	}
	score := seeded.Solve(board.NewPosition())
	_, found := oracle.Lookups()
	fmt.Println("score of the empty 5x4 board:", score)
	fmt.Println("the book answered:", found > 0)
	// Output:
	// score of the empty 5x4 board: 0
	// the book answered: true
}
