// Package bookfile holds the file formats of a c4book opening book
// (package book): how a book is exported to files and imported from them.
// A new export format goes here.
//
//   - The text format (text.go): one position a line, "moves score", where
//     moves is a move string (1-based column digits, as in Pascal Pons'
//     test sets) and score its exact score in Pons' convention:
//     ExportText, ImportText, and ScanLines, the line reader of every text
//     input of the commands.
//   - The position lines of the commands that take positions (c4book
//     solve, book get, bench): "moves" or "moves score" (positionline.go).
//   - The binary book file (binary.go), a versioned export of a book's
//     entries for programs that want them without Pebble: ExportBinary,
//     ImportBinary, BinaryReader and LoadBinary, which loads a file into
//     a book.Loaded. Its byte layout is documented above the code.
//   - Pons' .book format (pons.go), the opening book of his solver:
//     ExportPons, and ReadPons to read one back. Its byte layout is
//     documented above the code.
//
// The package uses only book's exported API: a book is read with
// book.Book.Entries, or from one book.View for an export that counts its
// entries before writing them, and written with book.Batch.
package bookfile
