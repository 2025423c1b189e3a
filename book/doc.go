// Package book stores and reads exact Connect 4 scores: the opening books
// that c4book generates.
//
// To read scores, open a book and ask it about positions (move strings
// played on a solver.Board):
//
//	bk, err := books.Open(solver.Standard) // the book shipped with c4book (package books)
//	// or: bk, err := book.Open("7x6.db", &book.Options{ReadOnly: true}), a book of yours
//	defer bk.Close()
//	p, err := solver.Standard.Parse("4453")
//	v, ok, err := bk.Get(p)               // the position's exact score, if the book holds it
//	scores, err := bk.MoveScores(p, nil)  // each playable column's score
//	cols, best, err := bk.BestMoves(p, nil)
//
// Scores follow Pascal Pons' convention (see solver/score.go): 0 a draw, a
// positive score a win for the player to move, higher the sooner. With a
// solver instead of nil, MoveScores and BestMoves solve the children the
// book lacks; NewOracle seeds a solver with the book, so that its search
// stops at the book's positions. Columns are 0-based in MoveScore.Col, as
// solver.Position.Play takes them, and numbered 1 to the width, as move
// strings write them, by MoveScore.Column and BestMoves.
//
// A book is one of two forms, and Open reads either: a Pebble database in
// a directory, the book of record, which generation jobs write; or a packed
// book (package book/packed), one immutable file that a finished book
// becomes to be shipped and read, a few bits a position, never written.
//
// A Pebble book holds the positions of one board size, keyed by depth
// (stones on the board) and canonical position key, so that a position and
// its mirror image share one entry and one depth is one contiguous range
// of keys. Each entry holds the exact score of its position and how the
// score was obtained: solved by a worker, derived from the scores of the
// position's children, or imported.
//
// The package's files, by what a reader comes for:
//
//   - the store: book.go (Open, Get, Put), packedbook.go (a packed book
//     read as a Book), format.go (the bytes of keys and
//     values), meta.go (the book and job records), entries.go, scan.go,
//     reader.go and view.go (reading), snapshot.go and snapshotter.go (the
//     snapshots a writer leaves for readers of a book being written),
//     holder.go and lock_*.go (one writer at a time), errors.go, damaged.go
//     and health.go (what goes wrong, said plainly), metrics.go (its
//     Prometheus figures);
//   - its jobs: jobs.go;
//   - what it answers: moves.go (best moves), answer.go (the answers of
//     c4book book get), oracle.go (a solver seeded with the book), loaded.go
//     (a book loaded into memory), stats.go, verify.go and resolve.go (a
//     checker of a book's consistency, and its re-solving of entries),
//     digest.go (the digests that compare the positions under a root with
//     another book's, and the walk of a root's set they share with
//     pack.go, which writes a packed book);
//   - the worker registry: registry.go (the keys of workers and observers,
//     records in the same database, written under the same lock),
//     registry_requests.go (the changes other processes ask of the job that
//     holds the book) and registry_revoke.go (taking a revoked worker's
//     entries out of the book).
//
// The file formats a book is exported to and imported from (text, binary,
// Pons' .book) are in package bookfile, which uses only this package's
// exported API: Entries and View to read a book, Batch and Reader to write
// one, KeyPosition and LoadEntries to check and load a file's entries.
//
// A Book is safe for concurrent use by several goroutines.
package book
