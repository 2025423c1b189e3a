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
