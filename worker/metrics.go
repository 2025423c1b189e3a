package worker

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector returns a Prometheus collector of c, read when scraped, for a
// worker of threads solving threads (docs/cli.md, "Metrics"). The counts
// are those the worker keeps anyway: nothing is added to the solver's
// loop.
func (c *Counters) Collector(threads int) prometheus.Collector {
	return countersCollector{c: c, threads: threads}
}

// countersCollector exposes a worker's running totals.
type countersCollector struct {
	c       *Counters
	threads int
}

var (
	solvedDesc     = prometheus.NewDesc("c4book_worker_positions_solved_total", "Positions solved by the worker: those of the tasks whose results it published.", nil, nil)
	nodesDesc      = prometheus.NewDesc("c4book_worker_nodes_total", "Nodes searched for the tasks whose results the worker published.", nil, nil)
	tasksDesc      = prometheus.NewDesc("c4book_worker_tasks_done_total", "Tasks solved by the worker, their results published.", nil, nil)
	handedBackDesc = prometheus.NewDesc("c4book_worker_tasks_handed_back_total", "Tasks the worker handed back unsolved: interrupted, a solver failure, a result it could not publish.", nil, nil)
	busyDesc       = prometheus.NewDesc("c4book_worker_threads_busy", "Threads of the worker working on a task now.", nil, nil)
	threadsDesc    = prometheus.NewDesc("c4book_worker_threads", "Solving threads of the worker.", nil, nil)
	taskWaitDesc   = prometheus.NewDesc("c4book_worker_task_wait_seconds_total", "Time the worker's threads waited for a task to come, summed over threads: the round trips of taking one, and a queue with none.", nil, nil)
	delivWaitDesc  = prometheus.NewDesc("c4book_worker_delivery_wait_seconds_total", "Time the worker's threads waited for results in flight to be published and acked before handing over the next, summed over threads.", nil, nil)
)

// Describe sends the descriptions of the worker's metrics.
func (cc countersCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{solvedDesc, nodesDesc, tasksDesc, handedBackDesc, busyDesc, threadsDesc, taskWaitDesc, delivWaitDesc} {
		ch <- d
	}
}

// Collect sends the worker's counters as they are now.
func (cc countersCollector) Collect(ch chan<- prometheus.Metric) {
	c := cc.c
	ch <- prometheus.MustNewConstMetric(solvedDesc, prometheus.CounterValue, float64(c.Solved.Load()))
	ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.CounterValue, float64(c.Nodes.Load()))
	ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.CounterValue, float64(c.Tasks.Load()))
	ch <- prometheus.MustNewConstMetric(handedBackDesc, prometheus.CounterValue, float64(c.HandedBack.Load()))
	ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(c.Busy.Load()))
	ch <- prometheus.MustNewConstMetric(threadsDesc, prometheus.GaugeValue, float64(cc.threads))
	ch <- prometheus.MustNewConstMetric(taskWaitDesc, prometheus.CounterValue, time.Duration(c.TaskWait.Load()).Seconds())
	ch <- prometheus.MustNewConstMetric(delivWaitDesc, prometheus.CounterValue, time.Duration(c.DeliveryWait.Load()).Seconds())
}
