package queue

import (
	"testing"

	"github.com/c4book/c4book/internal/testpar"
)

// TestMain runs testpar.WaitBound tests at a time unless -parallel is
// given: these tests wait for the server's timers (AckWaits,
// redeliveries, pull requests, reconnections) far more than they compute.
func TestMain(m *testing.M) { testpar.Main(m) }
