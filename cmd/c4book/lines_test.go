package main

import (
	"context"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
)

func TestReadLines(t *testing.T) {
	t.Run("all lines", func(t *testing.T) {
		lines, errp := readLines(context.Background(), strings.NewReader("x\n\n# note\ny\n"))
		var got []book.Line
		for l := range lines {
			got = append(got, l)
		}
		if *errp != nil || len(got) != 2 || got[1].Num != 4 || string(got[1].Text) != "y" || got[0].Num != 1 || string(got[0].Text) != "x" {
			t.Errorf("got %v, %v", got, *errp)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		lines, _ := readLines(ctx, strings.NewReader("x\ny\nz\n"))
		<-lines
		cancel()
		for range lines {
			// Drains at most the line being sent when ctx ended.
		}
	})
}
