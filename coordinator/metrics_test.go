package coordinator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/c4book/c4book/book"
)

// gathered returns the value of each metric of cs as "name" or
// "name{label=value}".
func gathered(tb testing.TB, cs ...prometheus.Collector) map[string]float64 {
	tb.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	values := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			values[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return values
}

// TestMetrics: the coordinator's callbacks set the phase, the positions
// of the phase and the results per worker.
func TestMetrics(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	if got := gathered(t, m.Collectors()...)["c4book_job_phase{phase=planning}"]; got != 1 {
		t.Errorf("a new job's planning phase = %v, want 1", got)
	}
	m.Progress(Progress{Phase: book.JobSolving, Done: 10, Total: 64})
	m.Result("w1", true)
	m.Result("w1", true)
	m.Result("w2", false)
	got := gathered(t, m.Collectors()...)
	for name, want := range map[string]float64{
		"c4book_job_phase{phase=planning}":                     0,
		"c4book_job_phase{phase=solving}":                      1,
		"c4book_job_positions_done":                            10,
		"c4book_job_positions_total":                           64,
		"c4book_coordinator_results_accepted_total{worker=w1}": 2,
		"c4book_coordinator_results_rejected_total{worker=w2}": 1,
		"c4book_coordinator_tasks_published_total":             0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (found %v), want %v", name, v, ok, want)
		}
	}
	if _, ok := got["c4book_coordinator_results_rejected_total{worker=w1}"]; ok {
		t.Error("w1 has rejected results, none were")
	}
}
