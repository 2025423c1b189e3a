package human

import (
	"testing"
	"time"
)

func TestSpan(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		1234567 * time.Nanosecond:                    "1ms",
		4*time.Second + 270*time.Millisecond:         "4.3s",
		19*time.Second + 600*time.Millisecond:        "20s",
		4*time.Minute + 5*time.Second:                "4m05s",
		2*time.Hour + 3*time.Minute + 40*time.Second: "2h04m",
	}
	for d, want := range cases {
		if got := Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	cases := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"}
	for n, want := range cases {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
