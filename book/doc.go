// Package book stores exact Connect 4 scores in a Pebble database: the
// opening book that c4book generates.
//
// A book holds the positions of one board size, keyed by depth (stones on
// the board) and canonical position key, so that a position and its mirror
// image share one entry and one depth is one contiguous range of keys. Each
// entry holds the exact score of its position in Pascal Pons' convention
// (see solver/score.go) and how the score was obtained: solved by a worker,
// derived from the scores of the position's children, or imported.
//
// The byte layout of keys and values is in format.go, the metadata record
// and the job records in meta.go. Beyond Get and Put the package gives
// the best moves of a position (moves.go), the answers of c4book book get
// (answer.go), statistics (stats.go), a checker of a book's consistency
// (verify.go), the digests that compare the positions under a root with
// another book's (digest.go), the snapshots a writer leaves for readers of
// a book being written (snapshot.go), and the requests by which other
// processes change the registered workers of a book a job holds
// (requests.go).
//
// The file formats a book is exported to and imported from (text, binary,
// Pons' .book) are in package bookfile, which uses only this package's
// exported API: Entries and View to read a book, Batch and Reader to write
// one, KeyPosition and LoadEntries to check and load a file's entries.
//
// A Book is safe for concurrent use by several goroutines.
package book
