package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether stream, a standard stream, is a terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns a function giving the columns of stream, a
// terminal, or 0 when they cannot be read. It asks each time: the
// window may be resized while a job runs.
func terminalWidth(stream any) func() int {
	return func() int {
		f, ok := stream.(*os.File)
		if !ok {
			return 0
		}
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return w
	}
}
