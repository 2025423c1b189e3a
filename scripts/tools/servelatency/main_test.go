package main

import (
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var ls []time.Duration
	for i := 1; i <= 100; i++ {
		ls = append(ls, ms(i))
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, ms(50)}, {0.9, ms(90)}, {0.99, ms(99)}, {1, ms(100)}, {0, ms(1)}} {
		if got := percentile(ls, c.q); got != c.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile of nothing = %v", got)
	}
	if got := percentile([]time.Duration{ms(7)}, 0.99); got != ms(7) {
		t.Errorf("percentile of one = %v", got)
	}
}

func TestReport(t *testing.T) {
	samples := []sample{{"", "book", 3 * time.Millisecond}, {"4", "book", time.Millisecond}, {"44", "solver", 9 * time.Millisecond}}
	var out strings.Builder
	report(&out, samples, 1, time.Second)
	for _, want := range []string{"3 positions of 1 games", "all           3  p50 3ms", "book          2  p50 1ms", "solver        1  p50 9ms", "9ms       44 (2 stones, solver)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
