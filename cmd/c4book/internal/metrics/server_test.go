package metrics

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestStart: the collectors given and those registered later are served,
// with the health; nothing is served once closed, and an empty address
// serves nothing.
func TestStart(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	given := prometheus.NewCounter(prometheus.CounterOpts{Name: "c4book_test_given_total", Help: "given to Start"})
	given.Add(3)
	m, err := Start("127.0.0.1:0", log, given)
	if err != nil {
		t.Fatal(err)
	}
	later := prometheus.NewGauge(prometheus.GaugeOpts{Name: "c4book_test_later", Help: "registered after Start"})
	m.Registerer().MustRegister(later)
	base := "http://" + m.Addr()
	if code, body := get(t, base+"/metrics"); code != http.StatusOK ||
		!strings.Contains(body, "c4book_test_given_total 3") || !strings.Contains(body, "c4book_test_later 0") || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics: %d\n%s", code, body)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz: %d %q", code, body)
	}
	m.Close()
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Errorf("served after Close")
	}

	none, err := Start("", log)
	if none != nil || err != nil || none.Registerer() != nil || none.Addr() != "" {
		t.Errorf("Start(\"\") = %v, %v; want nothing served", none, err)
	}
	none.Close()
}
