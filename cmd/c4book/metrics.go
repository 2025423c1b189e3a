package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/worker"
)

// The metrics of generate, coordinator and worker, served on
// metrics.listen (see docs/cli.md, "Metrics"). Every name starts with
// c4book_; counters end in _total. The figures are those the commands
// already keep for their status reports and summary: the worker's
// worker.Counters, the coordinator's Progress and its OnResult hook, and
// the book's Pebble metrics (book.Book.DiskUsage). Nothing is added to
// the solver's loop.

// addMetricsFlag adds --metrics, which sets metrics.listen.
func addMetricsFlag(f *pflag.FlagSet) {
	f.String("metrics", "", "`HOST:PORT` on which to serve Prometheus metrics (/metrics), health (/healthz) and Go's profiles (/debug/pprof/); empty: none (metrics.listen)")
	bindKey(f, "metrics", "metrics.listen")
}

// metricsServer serves a command's registry on /metrics, "ok" on /healthz
// and Go's profiles on /debug/pprof/, for as long as the command runs: its job, or its wait for
// tasks. The registry is the command's own, not Prometheus' global one.
// A nil *metricsServer (metrics.listen empty) serves nothing, and its
// methods do nothing.
type metricsServer struct {
	reg  *prometheus.Registry
	srv  *http.Server
	addr string // the address listened on, with the port chosen if it was 0
	done chan struct{}
}

// startMetrics listens on addr and serves a new registry holding cs and
// the Go runtime's and the process' collectors; it returns nil when addr
// is empty.
func startMetrics(addr string, log *slog.Logger, cs ...prometheus.Collector) (*metricsServer, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	// Go's profiles, for finding where a long job's memory or CPU goes
	// (go tool pprof http://HOST:PORT/debug/pprof/heap).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m := &metricsServer{reg: reg, addr: ln.Addr().String(), done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "url", "http://"+m.addr+"/metrics")
	return m, nil
}

// register adds collectors to the registry.
func (m *metricsServer) register(cs ...prometheus.Collector) {
	if m != nil {
		m.reg.MustRegister(cs...)
	}
}

// close stops the listener, letting scrapes under way finish (for a
// second at most). It must be called before what the collectors read is
// closed (the book).
func (m *metricsServer) close() {
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		m.srv.Close()
	}
	<-m.done
}

// workerCollector exposes a worker's running totals, read when scraped.
type workerCollector struct {
	c       *worker.Counters
	threads int
}

var (
	workerSolvedDesc     = prometheus.NewDesc("c4book_worker_positions_solved_total", "Positions solved by the worker: those of the tasks whose results it published.", nil, nil)
	workerNodesDesc      = prometheus.NewDesc("c4book_worker_nodes_total", "Nodes searched for the tasks whose results the worker published.", nil, nil)
	workerTasksDesc      = prometheus.NewDesc("c4book_worker_tasks_done_total", "Tasks solved by the worker, their results published.", nil, nil)
	workerHandedBackDesc = prometheus.NewDesc("c4book_worker_tasks_handed_back_total", "Tasks the worker handed back unsolved: interrupted, a solver failure, a result it could not publish.", nil, nil)
	workerBusyDesc       = prometheus.NewDesc("c4book_worker_threads_busy", "Threads of the worker working on a task now.", nil, nil)
	workerThreadsDesc    = prometheus.NewDesc("c4book_worker_threads", "Solving threads of the worker.", nil, nil)
)

// Describe sends the descriptions of the worker's metrics.
func (wc workerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{workerSolvedDesc, workerNodesDesc, workerTasksDesc, workerHandedBackDesc, workerBusyDesc, workerThreadsDesc} {
		ch <- d
	}
}

// Collect sends the worker's counters as they are now.
func (wc workerCollector) Collect(ch chan<- prometheus.Metric) {
	c := wc.c
	ch <- prometheus.MustNewConstMetric(workerSolvedDesc, prometheus.CounterValue, float64(c.Solved.Load()))
	ch <- prometheus.MustNewConstMetric(workerNodesDesc, prometheus.CounterValue, float64(c.Nodes.Load()))
	ch <- prometheus.MustNewConstMetric(workerTasksDesc, prometheus.CounterValue, float64(c.Tasks.Load()))
	ch <- prometheus.MustNewConstMetric(workerHandedBackDesc, prometheus.CounterValue, float64(c.HandedBack.Load()))
	ch <- prometheus.MustNewConstMetric(workerBusyDesc, prometheus.GaugeValue, float64(c.Busy.Load()))
	ch <- prometheus.MustNewConstMetric(workerThreadsDesc, prometheus.GaugeValue, float64(wc.threads))
}

// jobPhases are the values of the phase label of c4book_job_phase: the
// states a job goes through.
var jobPhases = []book.JobState{book.JobPlanning, book.JobSolving, book.JobDeriving, book.JobDone, book.JobFailed, book.JobStopped}

// jobMetrics are the coordinator's metrics, fed by its Progress and
// OnResult callbacks and by the queue it publishes on.
type jobMetrics struct {
	phase     *prometheus.GaugeVec
	done      prometheus.Gauge
	total     prometheus.Gauge
	published prometheus.Counter
	accepted  *prometheus.CounterVec
	rejected  *prometheus.CounterVec
}

// newJobMetrics makes the coordinator's metrics, in the planning phase.
func newJobMetrics() *jobMetrics {
	jm := &jobMetrics{
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
	jm.setPhase(book.JobPlanning)
	return jm
}

// collectors returns the metrics to register.
func (jm *jobMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{jm.phase, jm.done, jm.total, jm.published, jm.accepted, jm.rejected}
}

// setPhase makes s the phase shown.
func (jm *jobMetrics) setPhase(s book.JobState) {
	for _, p := range jobPhases {
		v := 0.0
		if p == s {
			v = 1
		}
		jm.phase.WithLabelValues(string(p)).Set(v)
	}
}

// progress is a coordinator.Config.Progress callback.
func (jm *jobMetrics) progress(p coordinator.Progress) {
	jm.setPhase(p.Phase)
	jm.done.Set(float64(p.Done))
	jm.total.Set(float64(p.Total))
}

// result is a coordinator.Config.OnResult callback.
func (jm *jobMetrics) result(worker string, accepted bool) {
	if accepted {
		jm.accepted.WithLabelValues(worker).Inc()
	} else {
		jm.rejected.WithLabelValues(worker).Inc()
	}
}

// queue returns q counting the tasks published through it.
func (jm *jobMetrics) queue(q *queue.Conn) coordinator.Queue {
	return countingQueue{Queue: q, published: jm.published}
}

// countingQueue is a coordinator.Queue that counts the tasks it publishes.
type countingQueue struct {
	coordinator.Queue
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

// bookCollectors returns gauges of the book's size on disk, read from
// Pebble's metrics when scraped (book.Book.DiskUsage reads no entry).
func bookCollectors(bk *book.Book) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_disk_bytes",
			Help: "Bytes the book takes on disk: tables, write-ahead log, manifest."},
			func() float64 { disk, _ := bk.DiskUsage(); return float64(disk) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_table_bytes",
			Help: "Bytes of the book's live tables."},
			func() float64 { _, tables := bk.DiskUsage(); return float64(tables) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_cache_bytes",
			Help: "Bytes in the book's block cache (Pebble)."},
			func() float64 { return float64(bk.DBStats().CacheBytes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_cache_hits_total",
			Help: "Block cache hits of the book (Pebble)."},
			func() float64 { return float64(bk.DBStats().CacheHits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_cache_misses_total",
			Help: "Block cache misses of the book (Pebble)."},
			func() float64 { return float64(bk.DBStats().CacheMiss) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_memtable_bytes",
			Help: "Bytes allocated by the book's memtables (Pebble)."},
			func() float64 { return float64(bk.DBStats().MemTableBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_l0_tables",
			Help: "Tables in level 0 of the book (Pebble): many mean compactions lag behind writes."},
			func() float64 { return float64(bk.DBStats().L0Tables) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c4book_book_read_amp",
			Help: "Tables a point lookup in the book may read (Pebble's read amplification)."},
			func() float64 { return float64(bk.DBStats().ReadAmp) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_compactions_total",
			Help: "Compactions of the book since it was opened (Pebble)."},
			func() float64 { return float64(bk.DBStats().Compactions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "c4book_book_flushes_total",
			Help: "Memtable flushes of the book since it was opened (Pebble)."},
			func() float64 { return float64(bk.DBStats().Flushes) }),
	}
}
