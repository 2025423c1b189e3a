// Package ctxio reads input that may be long in coming (a terminal, a
// pipe) so that the reading stops as soon as a context ends: a command
// waiting for its standard input still stops at once on Ctrl-C.
package ctxio

import (
	"context"
	"errors"
	"io"
)

// ErrStopped is the error of a Read once the Reader's context has ended.
var ErrStopped = errors.New("reading stopped: the context ended")

// Reader reads another reader in a goroutine, a chunk at a time, so that
// a Read waiting for input (a terminal, a pipe) returns ErrStopped as soon
// as a context ends. It costs a channel operation per chunk, not per line,
// so large inputs are read at full speed.
type Reader struct {
	ctx    context.Context
	chunks chan chunk    // chunks read, in order
	free   chan []byte   // buffers the reader may fill again
	done   chan struct{} // closed by Close: the goroutine stops
	cur    chunk         // the chunk being consumed
	left   []byte        // the unread part of cur.data
}

// chunk is the result of one Read of the wrapped reader.
type chunk struct {
	data []byte
	err  error
}

// chunkSize is the size of the chunks read.
const chunkSize = 64 << 10

// NewReader starts reading r until ctx ends. Close stops it; a Read of r
// that is blocked at that moment keeps its goroutine until it returns.
func NewReader(ctx context.Context, r io.Reader) *Reader {
	cr := &Reader{
		ctx:    ctx,
		chunks: make(chan chunk, 1),
		free:   make(chan []byte, 2),
		done:   make(chan struct{}),
	}
	cr.free <- make([]byte, chunkSize)
	cr.free <- make([]byte, chunkSize)
	go cr.fill(r)
	return cr
}

// fill reads r into free buffers and sends what it read, until an error
// (io.EOF included) or Close.
func (cr *Reader) fill(r io.Reader) {
	for {
		var buf []byte
		select {
		case buf = <-cr.free:
		case <-cr.done:
			return
		}
		n, err := r.Read(buf)
		select {
		case cr.chunks <- chunk{data: buf[:n], err: err}:
		case <-cr.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads from the wrapped reader, or returns ErrStopped when the
// context ends while it waits. Once the context has ended, Read returns
// ErrStopped even when a chunk is ready: a select between two ready cases
// picks one at random, and an interrupted import must not go on.
func (cr *Reader) Read(p []byte) (int, error) {
	for len(cr.left) == 0 {
		if cr.ctx.Err() != nil {
			return 0, ErrStopped
		}
		if cr.cur.err != nil {
			return 0, cr.cur.err
		}
		if cr.cur.data != nil {
			cr.free <- cr.cur.data[:cap(cr.cur.data)]
			cr.cur.data = nil
		}
		select {
		case cr.cur = <-cr.chunks:
			cr.left = cr.cur.data
		case <-cr.ctx.Done():
			return 0, ErrStopped
		}
	}
	n := copy(p, cr.left)
	cr.left = cr.left[n:]
	return n, nil
}

// Close stops the goroutine reading the wrapped reader.
func (cr *Reader) Close() error {
	close(cr.done)
	return nil
}
