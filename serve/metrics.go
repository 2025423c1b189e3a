package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus collectors of a Server (docs/cli.md,
// "Metrics"); register them with Collectors.
type Metrics struct {
	requests  *prometheus.CounterVec   // by path and status
	latency   *prometheus.HistogramVec // by path
	answers   *prometheus.CounterVec   // by source of the score
	failures  *prometheus.CounterVec   // by status
	cacheHits prometheus.Counter
	solved    prometheus.Counter
	reloads   prometheus.Counter
}

// newMetrics makes the collectors.
func newMetrics() *Metrics {
	return &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c4book_serve_requests_total",
			Help: "HTTP requests answered, by path and status."}, []string{"path", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "c4book_serve_request_seconds",
			Help:    "Time to answer an HTTP request, by path.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}, []string{"path"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c4book_serve_answers_total",
			Help: "Positions answered, by where their score came from (book, solver, rule)."}, []string{"source"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c4book_serve_failures_total",
			Help: "Requests answered with an error, by HTTP status."}, []string{"code"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{Name: "c4book_serve_cache_hits_total",
			Help: "Positions beyond the book answered from the cache of solved answers."}),
		solved: prometheus.NewCounter(prometheus.CounterOpts{Name: "c4book_serve_solved_total",
			Help: "Positions beyond the book solved."}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{Name: "c4book_serve_reloads_total",
			Help: "Times a newer snapshot of the book, or the finished book, replaced the one served."}),
	}
}

// Collectors returns every collector, to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.latency, m.answers, m.failures, m.cacheHits, m.solved, m.reloads}
}

// instrument counts and times the requests h answers. Paths are labelled
// by their API route; every page of the web site is "/".
func (m *Metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		path := r.URL.Path
		if !apiPaths[path] {
			path = "/"
		}
		m.requests.WithLabelValues(path, statusText(sw.status)).Inc()
		m.latency.WithLabelValues(path).Observe(time.Since(start).Seconds())
	})
}

// apiPaths are the paths labelled as themselves; any other is "/".
var apiPaths = map[string]bool{"/v1/position": true, "/v1/positions": true, "/v1/line": true,
	"/v1/stats": true, "/v1/jobs": true, "/healthz": true}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records status and writes it.
func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// statusText returns the status as a label: "200", "404", ...
func statusText(status int) string {
	const digits = "0123456789"
	if status < 100 || status > 999 {
		return "other"
	}
	return string([]byte{digits[status/100], digits[status/10%10], digits[status%10]})
}
