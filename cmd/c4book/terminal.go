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
