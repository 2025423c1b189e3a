package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/testaddr"
)

// scrape reads the metrics served at addr (HOST:PORT) and parses them; an
// error when nothing listens there (yet, or any more) or the text does not
// parse.
func scrape(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	var p expfmt.TextParser
	return p.TextToMetricFamilies(resp.Body)
}

// metricValue returns the value of the metric name whose labels include
// labels (name, value pairs), and false if there is none.
func metricValue(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf, ok := mfs[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// wantHealthy checks that addr answers /healthz with 200 "ok", and serves
// Go's heap profile.
func wantHealthy(tb testing.TB, addr string) {
	tb.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		tb.Errorf("GET /healthz: %s %q, want 200 \"ok\\n\"", resp.Status, body)
	}
	// Go's heap profile is served beside them.
	resp, err = http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		tb.Errorf("GET /debug/pprof/heap: %s, %d bytes, want 200 and a profile", resp.Status, len(body))
	}
}

// TestGenerate_metrics: generate --metrics serves the worker's and the
// coordinator's metrics while the job runs, positions solved going up
// from one scrape to the next, and stops serving when it ends.
func TestGenerate_metrics(t *testing.T) {
	t.Parallel()
	addr := testaddr.Free(t)
	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	cmd := startCommand(t, generateArgs(bookPath, "--workers=1", "--task-size=8", "--metrics", addr)...)
	cmd.stderr.waitLine(t, `msg="serving metrics"`, cmd.done)
	wantHealthy(t, addr)

	// Scrape until the job ends: a second of solving, scraped every 10ms.
	var solved []float64
	var published, threads float64
	var last map[string]*dto.MetricFamily
	phases := map[string]bool{}
	for {
		mfs, err := scrape(addr)
		if err != nil {
			// The listener closes as the command ends, a moment before
			// it returns.
			select {
			case <-cmd.done:
			case <-time.After(5 * time.Second):
				t.Fatalf("scraping a running job: %v", err)
			}
			break
		}
		n, ok := metricValue(mfs, "c4book_worker_positions_solved_total")
		if !ok {
			t.Fatalf("no c4book_worker_positions_solved_total in %v", keys(mfs))
		}
		solved = append(solved, n)
		published, _ = metricValue(mfs, "c4book_coordinator_tasks_published_total")
		threads, _ = metricValue(mfs, "c4book_worker_threads")
		for _, p := range []book.JobState{book.JobPlanning, book.JobSolving, book.JobDeriving, book.JobDone, book.JobFailed, book.JobStopped} {
			if v, _ := metricValue(mfs, "c4book_job_phase", "phase", string(p)); v == 1 {
				phases[string(p)] = true
			}
		}
		last = mfs
		time.Sleep(10 * time.Millisecond)
	}
	wantOK(t, cmd.wait())
	for _, name := range []string{"c4book_job_positions_done", "c4book_job_positions_total", "c4book_worker_nodes_total",
		"c4book_worker_tasks_done_total", "c4book_worker_tasks_handed_back_total", "c4book_worker_threads_busy",
		"c4book_book_disk_bytes", "c4book_book_table_bytes", "c4book_book_cache_bytes", "c4book_book_cache_hits_total",
		"c4book_book_cache_misses_total", "c4book_book_memtable_bytes", "c4book_book_l0_tables", "c4book_book_read_amp",
		"c4book_book_compactions_total", "c4book_book_flushes_total"} {
		if _, ok := metricValue(last, name); !ok {
			t.Errorf("no %s in the last scrape", name)
		}
	}
	if v, _ := metricValue(last, "c4book_book_memtable_bytes"); v <= 0 {
		t.Errorf("c4book_book_memtable_bytes = %v: a book being written has a memtable", v)
	}
	if len(solved) < 2 || solved[0] >= solved[len(solved)-1] || solved[len(solved)-1] <= 0 {
		t.Errorf("positions solved in %d scrapes: %v; want it to go up from the first to the last", len(solved), solved)
	}
	if published <= 0 || threads != 1 {
		t.Errorf("tasks published %v, threads %v: want some, and 1", published, threads)
	}
	if len(phases) == 0 {
		t.Errorf("c4book_job_phase was 1 for no phase")
	}
	if _, err := scrape(addr); err == nil {
		t.Errorf("metrics still served after the command ended")
	}
}

// TestWorker_metrics: worker --metrics is healthy while it waits for a
// coordinator, and counts the positions it solves.
func TestWorker_metrics(t *testing.T) {
	isolateEnv(t)
	t.Setenv("C4BOOK_NATS_TOKEN", "s3cret")
	url := testServer(t, "s3cret")
	addr := testaddr.Free(t)
	w := startCommand(t, workerArgs(url, "w1", "--metrics", addr)...)
	w.stderr.waitLine(t, "waiting for a coordinator", w.done)
	wantHealthy(t, addr)
	before, err := scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := metricValue(before, "c4book_worker_positions_solved_total"); !ok || n != 0 {
		t.Errorf("positions solved before any task: %v (%v), want 0", n, ok)
	}

	bookPath := filepath.Join(t.TempDir(), "5x4.db")
	wantOK(t, run(t, "", jobArgs("coordinator", bookPath, "--nats", url)...))
	after, err := scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	solved, _ := metricValue(after, "c4book_worker_positions_solved_total")
	tasks, _ := metricValue(after, "c4book_worker_tasks_done_total")
	nodes, _ := metricValue(after, "c4book_worker_nodes_total")
	threads, _ := metricValue(after, "c4book_worker_threads")
	if solved <= 0 || tasks <= 0 || nodes <= 0 || threads != 2 {
		t.Errorf("after the job: positions solved %v, tasks %v, nodes %v, threads %v; want some, and 2 threads", solved, tasks, nodes, threads)
	}
	wantHealthy(t, addr)
	w.stop()
}

// keys returns the names of the metric families, for messages.
func keys(mfs map[string]*dto.MetricFamily) []string {
	names := make([]string, 0, len(mfs))
	for name := range mfs {
		names = append(names, name)
	}
	return names
}

// TestMetrics_busyAddress: --metrics on an address in use fails at once,
// naming the key.
func TestMetrics_busyAddress(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := run(t, "", generateArgs(filepath.Join(t.TempDir(), "5x4.db"), "--metrics", l.Addr().String())...)
	wantErr(t, r, "metrics.listen", l.Addr().String())
	bad := run(t, "", "worker", "--nats", "nats://127.0.0.1:1", "--metrics", "9090")
	wantErr(t, bad, `metrics.listen: "9090" is not HOST:PORT`)
}
