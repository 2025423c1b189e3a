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
// The package's files, by what a reader comes for:
//
//   - the store: book.go (Open, Get, Put), format.go (the bytes of keys and
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
//     another book's);
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
