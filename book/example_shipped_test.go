package book_test

import (
	"fmt"
	"log"

	"github.com/c4book/c4book/books"
	"github.com/c4book/c4book/solver"
)

// The score of each column of a position, read from the book that ships
// with c4book (package books: every position of 7x6 with at most 12
// stones, exact, embedded in the program). A score is for the player to
// move: 0 a draw, positive a win, higher the sooner (solver/score.go).
func Example() {
	bk, err := books.Open(solver.Standard)
	if err != nil {
		log.Fatal(err)
	}
	defer bk.Close()
	for _, moves := range []string{"", "4453"} {
		p, err := solver.Standard.Parse(moves)
		if err != nil {
			log.Fatal(err)
		}
		scores, err := bk.MoveScores(p, nil) // nil: the book alone, no solver
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q:", moves)
		for _, m := range scores {
			fmt.Printf(" %d:%d", m.Column(), m.Score)
		}
		fmt.Println()
	}
	// Output:
	// "": 1:-2 2:-1 3:0 4:1 5:0 6:-1 7:-2
	// "4453": 1:-5 2:-5 3:-2 4:-3 5:-4 6:-2 7:-2
}
