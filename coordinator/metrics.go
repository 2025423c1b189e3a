package coordinator

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// Metrics are the Prometheus collectors of a job's coordinator
// (docs/cli.md, "Metrics"), fed by its Progress and OnResult callbacks
// and by the queue it publishes on (Queue); register them with
// Collectors. Its methods are safe for concurrent use.
type Metrics struct {
	phase     *prometheus.GaugeVec
	done      prometheus.Gauge
	total     prometheus.Gauge
	published prometheus.Counter
	accepted  *prometheus.CounterVec
	rejected  *prometheus.CounterVec
}

// metricPhases are the values of the phase label of c4book_job_phase:
// the states a job goes through.
var metricPhases = []book.JobState{book.JobPlanning, book.JobSolving, book.JobDeriving, book.JobDone, book.JobFailed, book.JobStopped}

// NewMetrics makes the coordinator's metrics, in the planning phase.
func NewMetrics() *Metrics {
	m := &Metrics{
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "c4book_job_phase",
			Help: "Phase of the job: 1 for the phase it is in (planning, solving, deriving, done, failed, stopped), 0 for the others."}, []string{"phase"}),
		done: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c4book_job_positions_done",
			Help: "Positions done in the job's phase: made while planning, solved while solving, scored while deriving."}),
		total: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c4book_job_positions_total",
			Help: "Positions of the job's phase; 0 while planning, where the total is not known yet."}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "c4book_coordinator_tasks_published_total",
			Help: "Tasks the coordinator published, copies published again included."}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c4book_coordinator_results_accepted_total",
			Help: "Results of a worker whose scores passed the coordinator's checks, duplicates included."}, []string{"worker"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c4book_coordinator_results_rejected_total",
			Help: "Results of a worker the coordinator rejected: impossible scores, or wrong ones found by a cross-check."}, []string{"worker"}),
	}
	m.SetPhase(book.JobPlanning)
	return m
}

// Collectors returns the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.phase, m.done, m.total, m.published, m.accepted, m.rejected}
}

// SetPhase makes s the phase shown: the job's last states (done, failed,
// stopped) are set so, after Run returns.
func (m *Metrics) SetPhase(s book.JobState) {
	for _, p := range metricPhases {
		v := 0.0
		if p == s {
			v = 1
		}
		m.phase.WithLabelValues(string(p)).Set(v)
	}
}

// Progress is a Config.Progress callback.
func (m *Metrics) Progress(p Progress) {
	m.SetPhase(p.Phase)
	m.done.Set(float64(p.Done))
	m.total.Set(float64(p.Total))
}

// Result is a Config.OnResult callback.
func (m *Metrics) Result(worker string, accepted bool) {
	if accepted {
		m.accepted.WithLabelValues(worker).Inc()
	} else {
		m.rejected.WithLabelValues(worker).Inc()
	}
}

// Queue returns q counting the tasks published through it.
func (m *Metrics) Queue(q Queue) Queue {
	return countingQueue{Queue: q, published: m.published}
}

// countingQueue is a Queue that counts the tasks it publishes.
type countingQueue struct {
	Queue
	published prometheus.Counter
}

// PublishTasks publishes tasks and counts them once they are published.
func (q countingQueue) PublishTasks(ctx context.Context, tasks []queue.Task) error {
	err := q.Queue.PublishTasks(ctx, tasks)
	if err == nil {
		q.published.Add(float64(len(tasks)))
	}
	return err
}
