package progress

import (
	"strings"
	"testing"
	"time"
)

// TestStep: a line only once the last is old enough, with the
// count, the share and what is left.
func TestStep(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := NewStep(&out, "re-solved", "entries", time.Hour)
	p.Update(1, 4)
	if out.Len() != 0 {
		t.Fatalf("a line before its time: %q", out.String())
	}
	p.every = 0
	p.start = time.Now().Add(-10 * time.Second)
	p.Update(1000, 4000)
	if got := out.String(); !strings.HasPrefix(got, "re-solved 1,000 of 4,000 entries (25.0%) in 10s, about 30s left") {
		t.Errorf("line %q", got)
	}
}

// TestStep_startsLate: a step that reports none done when its work
// begins, long after the Step was made, counts neither the wait in its
// time nor in its pace (book verify read for 12 s, re-solved one entry,
// and said "in 12s, about 39m57s left" of 200).
func TestStep_startsLate(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := NewStep(&out, "re-solved", "entries", 10*time.Second)
	p.start = time.Now().Add(-12 * time.Second) // the book was read meanwhile
	p.last = p.start
	p.Update(0, 200)
	p.Update(1, 200)
	if out.Len() != 0 {
		t.Errorf("a line for the first entry, the wait counted: %q", out.String())
	}
	p.every = 0
	p.Update(2, 200)
	if got := out.String(); !strings.HasPrefix(got, "re-solved 2 of 200 entries (1.0%) in 0s, about 0s left") {
		t.Errorf("line %q, want the time since the re-solving began", got)
	}
}
