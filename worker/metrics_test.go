package worker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCounters_Collector: the collector reads the counters as they are
// when scraped, and the threads it was given.
func TestCounters_Collector(t *testing.T) {
	t.Parallel()
	c := new(Counters)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.Collector(3))
	c.Solved.Add(40)
	c.Nodes.Add(1000)
	c.Tasks.Add(5)
	c.HandedBack.Add(1)
	c.Busy.Add(2)
	c.TaskWait.Add(int64(1500 * time.Millisecond))
	c.DeliveryWait.Add(int64(250 * time.Millisecond))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		got[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	want := map[string]float64{
		"c4book_worker_positions_solved_total":      40,
		"c4book_worker_nodes_total":                 1000,
		"c4book_worker_tasks_done_total":            5,
		"c4book_worker_tasks_handed_back_total":     1,
		"c4book_worker_threads_busy":                2,
		"c4book_worker_threads":                     3,
		"c4book_worker_task_wait_seconds_total":     1.5,
		"c4book_worker_delivery_wait_seconds_total": 0.25,
	}
	if len(got) != len(want) {
		t.Errorf("metrics %v, want %v", got, want)
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
}
