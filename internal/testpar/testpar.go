// Package testpar sets how many tests of a package run at once, for
// packages whose tests wait far more than they compute.
package testpar

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// WaitBound is how many tests run at once, by Main, in packages whose
// tests wait for a server's timers (AckWaits, redeliveries, pull
// requests, reconnections) far more than they compute.
const WaitBound = 4

// Main is a TestMain for such packages: it runs m with WaitBound tests at
// a time (Default) unless -parallel is given, and exits with its code.
func Main(m *testing.M) {
	flag.Parse()
	Default(WaitBound)
	os.Exit(m.Run())
}

// Default makes -test.parallel n (or GOMAXPROCS, if more) unless the
// command line gives it. Go's default is GOMAXPROCS, which on a machine of
// two cores runs two tests at a time: tests that spend most of their time
// waiting for a server's timers then leave the machine idle. Call it from
// TestMain, after flag.Parse and before m.Run.
func Default(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0)))); err != nil {
		panic(err) // only if the testing package's flags are not registered: a misuse
	}
}
