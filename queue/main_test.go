package queue

import (
	"flag"
	"os"
	"testing"

	"github.com/c4book/c4book/internal/testpar"
)

// waitBoundParallel is how many tests of this package run at once unless
// -parallel says otherwise. Go's default is GOMAXPROCS, but these tests
// spend most of their time waiting for the server's timers (AckWaits,
// redeliveries, pull requests, reconnections), not computing: on a
// machine of two cores, two at a time leave it idle most of the time.
const waitBoundParallel = 4

// TestMain runs waitBoundParallel tests at a time (or GOMAXPROCS, if more)
// unless -parallel is given.
func TestMain(m *testing.M) {
	flag.Parse()
	testpar.Default(waitBoundParallel)
	os.Exit(m.Run())
}
