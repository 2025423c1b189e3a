// Package packed is the packed book: a finished book's exact scores in one
// immutable file, a few bits a position, read in place.
//
// A packed book holds the set of one generation job: every position
// reachable from a root by legal play with at most a depth of stones, one
// per canonical key. It stores no positions: membership is computed
// (File.Contains), and a score is found from the position's key in binary
// fuse arrays (package internal/fuse) that hold the bits of a Huffman code
// of the score, a code chosen by the position's context (its threats).
// Positions the rules score (a four now, or none to stop the opponent's)
// cost nothing. The header names the board, root, depth, number of
// positions and the digest of the set; every 4 KiB block of the data has a
// checksum, checked the first time a lookup reads it. The layout is drawn
// in format.go.
//
// Make one with a Builder (c4book book pack does, from a Pebble book);
// read one with Open. Package book opens packed files wherever it opens a
// book, read-only: use book.Open to read either form.
//
// Files: format.go (the layout, header encoding), code.go (canonical
// Huffman codes), context.go (kinds of positions and context schemes),
// build.go (the Builder), file.go (Open and lookups), mmap_*.go.
package packed
