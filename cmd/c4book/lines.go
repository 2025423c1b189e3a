package main

import (
	"bytes"
	"context"
	"io"

	"github.com/c4book/c4book/book"
)

// readLines runs book.ScanLines in a goroutine and sends the lines of r
// that hold something (not blank, not a comment: see book.Line.Ignorable)
// on the returned channel, their text copied, so that a caller waiting
// for input notices when ctx ends. The channel is closed at the end of r
// or when ctx ends; then *errp holds the read error, if any.
func readLines(ctx context.Context, r io.Reader) (lines <-chan book.Line, errp *error) {
	ch := make(chan book.Line)
	errp = new(error)
	go func() {
		defer close(ch)
		*errp = book.ScanLines(r, func(l book.Line) bool {
			if l.Ignorable() {
				return true
			}
			l.Text = bytes.Clone(l.Text)
			select {
			case ch <- l:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return ch, errp
}
