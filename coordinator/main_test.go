package coordinator_test

import (
	"testing"

	"github.com/c4book/c4book/internal/testpar"
)

// TestMain runs testpar.WaitBound tests at a time unless -parallel is
// given: these tests wait for the queue's timers (AckWaits, delays of
// tasks handed back, idle checks) far more than they compute.
func TestMain(m *testing.M) { testpar.Main(m) }
