package worker

import (
	"testing"
	"time"
)

// TestPace_fetchAhead: a thread fetches ahead until it knows its round
// trip and its tasks' time, and then while a task takes less than ten
// round trips; the round trip is the least of the recent requests (one
// that waited for tasks is not the link's).
func TestPace_fetchAhead(t *testing.T) {
	t.Parallel()
	var p pace
	if !p.fetchAhead() {
		t.Error("nothing known: want fetching ahead")
	}
	p.fetched(200 * time.Millisecond) // a slow link
	p.fetched(3 * time.Second)        // a request that waited for tasks
	if got := p.roundTrip(); got != 200*time.Millisecond {
		t.Errorf("roundTrip = %v, want the least, 200ms", got)
	}
	p.solved(time.Second)
	if !p.fetchAhead() {
		t.Error("tasks of 1 s over 200 ms: want fetching ahead")
	}
	for range 20 {
		p.solved(5 * time.Second) // a machine its owner took over
	}
	if p.fetchAhead() {
		t.Errorf("tasks of %v over 200 ms: want no fetching ahead", p.solve)
	}
	var lan pace
	lan.fetched(500 * time.Microsecond)
	lan.solved(100 * time.Millisecond)
	if lan.fetchAhead() {
		t.Error("tasks of 100 ms over 0.5 ms: want no fetching ahead (a tenth of a millisecond's wait is cheaper than a task held)")
	}
	lan.solved(time.Microsecond)
	for range 20 {
		lan.solved(time.Millisecond)
	}
	if !lan.fetchAhead() {
		t.Errorf("tasks of %v over 0.5 ms: want fetching ahead", lan.solve)
	}
	// The ring forgets: eight fast requests later, the slow link is gone.
	for range fetchSamples {
		p.fetched(time.Millisecond)
	}
	if got := p.roundTrip(); got != time.Millisecond {
		t.Errorf("roundTrip after eight 1 ms requests = %v, want 1ms", got)
	}
}
