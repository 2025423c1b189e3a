// Package progress shows how far a job or a long step is, for people: the
// rate of positions done and the time the rest takes at that rate (the
// ETA: Rate and TimeLeft, the one formula every command uses), the bar
// and the line of a job's progress (Bar, Line), the Console that draws
// the bar on a terminal among log lines, and the progress lines of a step
// (Step).
package progress

import (
	"math"
	"time"
)

// Rate returns the positions done a second: n done over d. It is 0 when
// nothing was done (n not above 0) or no time passed.
func Rate[T int64 | uint64](n T, d time.Duration) float64 {
	if n <= 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// TimeLeft returns the time left positions take at rate positions a
// second, which must be above 0: the ETA. A time too long for a
// time.Duration (a rate near 0) is the longest there is.
func TimeLeft[T int64 | uint64](left T, rate float64) time.Duration {
	ns := float64(left) / rate * float64(time.Second)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
