// Package serve is the read side of an opening book over HTTP: a JSON API
// answering, for any position, its exact score, the score of each column
// and the best moves (from the book, and beyond its depth from a solver
// that uses the book as its oracle, within a time limit), and a web page
// to play through the book. It reads a book a job is still writing from
// the job's newest snapshot, and moves to newer ones as they come.
//
// docs/serve.md describes the API; c4book serve runs it.
package serve
