// Package human writes numbers and spans of time for people: counts with
// commas between groups of three digits, rates per second, and spans of
// time rounded to what a person reads at a glance. Every table and
// progress line of the command line writes its figures with it, so that
// they read alike.
package human

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Count writes n with a comma between groups of three digits: "1,234,567".
func Count[T int64 | uint64 | int](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Counted writes n with Count and the noun after it, its plural (noun+"s")
// unless n is 1: "1 line", "2,048 lines".
func Counted[T int64 | uint64 | int](n T, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Count(n) + " " + noun + "s"
}

// Rate writes a rate per second: three significant digits, or a whole
// count with commas from 1,000 up.
func Rate(r float64) string {
	switch {
	case r >= 1000:
		return Count(int64(r + 0.5))
	case r >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64)
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// Span writes a span of time rounded for people: "850ms", "4.3s", "19s",
// "4m05s", "2h03m".
func Span(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
