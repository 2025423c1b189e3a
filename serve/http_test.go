package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServer_HTTPServer: the limits HTTPServer sets are those its doc
// comment and docs/serve.md give.
func TestServer_HTTPServer(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, testBook(t, board54(t), 2), Options{SolveTimeout: 2 * time.Second})
	hs := srv.HTTPServer()
	if hs.ReadHeaderTimeout != 10*time.Second || hs.ReadTimeout != 30*time.Second || hs.WriteTimeout != 35*time.Second ||
		hs.IdleTimeout != 2*time.Minute || hs.MaxHeaderBytes != 16<<10 {
		t.Errorf("limits: read header %v, read %v, write %v, idle %v, header %d bytes",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
}

// TestServer_slowClients: a client that sends its headers or its body
// slowly, and stops, has its connection closed once the server's limit
// is past; headers and bodies too large are refused.
func TestServer_slowClients(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, testBook(t, board54(t), 2), Options{})
	lim := httpLimits{readHeader: 200 * time.Millisecond, read: 500 * time.Millisecond, write: 5 * time.Second,
		idle: time.Second, maxHeader: 1 << 10, maxBody: 4 << 10}
	hs := srv.httpServer(lim)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	// send writes req, then waits for the server to close the
	// connection, and returns what it answered: the server must close it
	// within 10 s (its limits are under a second), or the test fails.
	send := func(t *testing.T, req string) string {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("the server still holds the connection after 10 s; it answered %q", short(string(got)))
		}
		return string(got)
	}
	status := func(answer string) int {
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(answer)), nil)
		if err != nil {
			return 0
		}
		return resp.StatusCode
	}

	t.Run("headers never finished", func(t *testing.T) {
		if got := send(t, "GET /v1/position?moves=33 HTTP/1.1\r\nHost: x\r\nX-Slow: "); status(got) == 200 {
			t.Errorf("answered %q", short(got))
		}
	})
	t.Run("body never finished", func(t *testing.T) {
		got := send(t, "POST /v1/positions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"positions\": [\"3")
		if st := status(got); st != 0 && st != 400 {
			t.Errorf("answered %q, want 400 or nothing", short(got))
		}
	})
	t.Run("kept alive, idle", func(t *testing.T) {
		if got := send(t, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status(got) != 200 {
			t.Errorf("answered %q, want 200 then the connection closed", short(got))
		}
	})
	t.Run("headers too large", func(t *testing.T) {
		req := fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("x", 8<<10))
		if got := send(t, req); status(got) != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("answered %q, want 431", short(got))
		}
	})
	t.Run("body too large", func(t *testing.T) {
		body := `{"positions": ["` + strings.Repeat("3", 8<<10) + `"]}`
		req := fmt.Sprintf("POST /v1/positions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		got := send(t, req)
		if status(got) != 400 || !strings.Contains(got, "request body too large") {
			t.Errorf("answered %q, want 400 naming the size", short(got))
		}
	})
}

// short returns s, or its first 200 bytes, for a message.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// TestServer_Serve: Serve answers on its listener until its context is
// done, then returns nil and answers no more.
func TestServer_Serve(t *testing.T) {
	srv, _ := newTestServer(t, testBook(t, board54(t), 2), Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + "/healthz"
	if st, body := getHealth(t, "http://"+ln.Addr().String()); st != http.StatusOK {
		t.Errorf("GET %s: %d %q", url, st, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v after its context ended, want nil", err)
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s answered after Serve returned", url)
	}
}
