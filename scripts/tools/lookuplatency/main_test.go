package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun: the shipped 5x4 book (every position) is measured in two
// passes, every position drawn found.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, "../../../books/5x4-d20.c4pack", 2000, 1); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "first pass: 2000 lookups") || !strings.Contains(s, "second pass: 2000 lookups") {
		t.Errorf("output:\n%s", s)
	}
}
