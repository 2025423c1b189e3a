// Command fakebook makes a book of every position reachable from the
// empty board with at most a depth of stones, as "c4book generate --depth
// D" would, with made-up scores: a score possible at its depth, drawn
// from the position's key. It takes a minute for the 58,339,652 positions
// of depth 14 on 7x6, where a real book takes days of solving, so that
// what reads a whole book (c4book book digest, book stats, export) can
// be measured at that size. Its scores are wrong: it is a benchmark tool,
// never a book to use.
//
//	fakebook --book DIR --depth D [--width W --height H]
//
// The positions are enumerated depth by depth, each from the one before,
// sorted on disk (internal/keyfile), and written in synced batches of
// 10,000; the book is compacted at the end, as a finished job's would be
// after c4book book compact. It prints the positions of each depth.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

func main() {
	dir := flag.String("book", "", "the book to make (must not exist)")
	depth := flag.Int("depth", 0, "the deepest positions, in stones")
	width := flag.Int("width", 7, "columns of the board")
	height := flag.Int("height", 6, "rows of the board")
	flag.Parse()
	if *dir == "" || *depth < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: fakebook --book DIR --depth D [--width W --height H]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	b, err := solver.NewBoard(*width, *height)
	if err == nil {
		_, err = makeBook(b, *dir, *depth, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakebook:", err)
		os.Exit(1)
	}
}

// makeBook writes the book of board b at dir, every position up to depth
// stones with a made-up score, and returns the number of positions.
func makeBook(b *solver.Board, dir string, depth int, out io.Writer) (int64, error) {
	if _, err := os.Stat(dir); err == nil {
		return 0, fmt.Errorf("%s exists: fakebook makes a new book", dir)
	}
	bk, err := book.Open(dir, &book.Options{Create: true, Board: b})
	if err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp("", "fakebook-")
	if err != nil {
		bk.Close()
		return 0, err
	}
	defer os.RemoveAll(tmp)
	n, err := fill(bk, b, depth, tmp, out)
	if err == nil {
		err = bk.Compact(context.Background())
	}
	if cerr := bk.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// fill writes the positions, depth by depth.
func fill(bk *book.Book, b *solver.Board, depth int, tmp string, out io.Writer) (int64, error) {
	start := time.Now()
	cur, next := keyfile.NewFirstSorter(tmp, 1<<22), keyfile.NewFirstSorter(tmp, 1<<22)
	defer cur.Close()
	defer next.Close()
	empty := b.NewPosition()
	if err := cur.Add(empty.CanonicalKey(), 0); err != nil {
		return 0, err
	}
	batch := bk.NewBatch()
	defer batch.Close()
	var total int64
	for d := 0; d <= depth && d <= b.Cells(); d++ {
		var n int64
		lo, hi := b.ScoreRange(d)
		err := cur.Merge(func(key, _ uint64) error {
			score := lo + int(key*0x9E3779B97F4A7C15>>40%uint64(hi-lo+1))
			if err := batch.Put(book.Entry{Depth: d, Key: key, Value: book.Value{Score: score, Origin: book.OriginSolved}}); err != nil {
				return err
			}
			if batch.Len() >= 10000 {
				if err := batch.Commit(); err != nil {
					return err
				}
			}
			n++
			if d == depth {
				return nil
			}
			p, err := b.PositionFromKey(key)
			if err != nil {
				return err
			}
			for _, c := range p.Children() {
				if !c.LastMoveWon() {
					if err := next.Add(c.CanonicalKey(), 0); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		fmt.Fprintf(out, "depth %d: %d positions, %d in all (%v)\n", d, n, total, time.Since(start).Round(time.Second))
		cur, next = next, cur
	}
	return total, batch.Commit()
}
