package queue

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStartServer(t *testing.T) {
	t.Run("monitoring endpoint", func(t *testing.T) {
		s := startServer(t, ServerOptions{Monitor: "127.0.0.1:0"})
		addr := s.MonitorAddr()
		if addr == "" {
			t.Fatal("MonitorAddr is empty")
		}
		resp, err := http.Get("http://" + addr + "/healthz?js-enabled-only=true")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /healthz: %s", resp.Status)
		}
		if a := startServer(t, ServerOptions{}).MonitorAddr(); a != "" {
			t.Errorf("MonitorAddr without Monitor = %q, want \"\"", a)
		}
		if _, err := StartServer(ServerOptions{StoreDir: t.TempDir(), Monitor: "8222"}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Monitor 8222: %v, want ErrInvalidOptions", err)
		}
	})
	t.Run("in-process", func(t *testing.T) {
		s := startServer(t, ServerOptions{})
		if u := s.ClientURL(); u != "" {
			t.Errorf("ClientURL = %q, want \"\" without a listener", u)
		}
		c := connectTo(t, s, "test")
		if err := c.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
			t.Fatalf("EnsureStreams over an in-process connection: %v", err)
		}
	})
	t.Run("listening, no auth allowed", func(t *testing.T) {
		s := startServer(t, ServerOptions{Listen: "127.0.0.1:0", AllowNoAuth: true})
		u := s.ClientURL()
		if !strings.HasPrefix(u, "nats://127.0.0.1:") || strings.HasSuffix(u, ":0") || strings.HasSuffix(u, ":4222") {
			t.Errorf("ClientURL = %q, want nats://127.0.0.1:<free port>", u)
		}
		c, err := Connect(testCtx(t, 10*time.Second), Options{URL: u})
		if err != nil {
			t.Fatalf("Connect(%s): %v", u, err)
		}
		c.Close()
	})
	t.Run("all interfaces", func(t *testing.T) {
		s := startServer(t, ServerOptions{Listen: ":-1", Token: "secret"})
		if u := s.ClientURL(); strings.Contains(u, "0.0.0.0") || !strings.HasPrefix(u, "nats://") {
			t.Errorf("ClientURL = %q, want this host's name", u)
		}
	})

	errCases := []struct {
		name string
		o    ServerOptions
		err  error
		want string
	}{
		{"no store", ServerOptions{}, ErrInvalidOptions, "StoreDir (nats.store-dir) is required"},
		{"exposed without auth", ServerOptions{StoreDir: "x", Listen: "127.0.0.1:-1"}, ErrNoAuth, "set nats.token, or nats.user and nats.password"},
		{"bad address", ServerOptions{StoreDir: "x", Listen: "localhost", Token: "t"}, ErrInvalidOptions, `"localhost" is not HOST:PORT`},
		{"bad port", ServerOptions{StoreDir: "x", Listen: ":70000", Token: "t"}, ErrInvalidOptions, "HOST:PORT"},
		{"token and user", ServerOptions{StoreDir: "x", Token: "t", User: "u", Password: "p"}, ErrInvalidOptions, "not both"},
		{"user without password", ServerOptions{StoreDir: "x", User: "u"}, ErrInvalidOptions, "go together"},
		{"key without cert", ServerOptions{StoreDir: "x", Listen: ":-1", Token: "t", TLSKey: "k"}, ErrInvalidOptions, "TLS needs a certificate"},
		{"TLS without listener", ServerOptions{StoreDir: "x", TLSCert: "c", TLSKey: "k"}, ErrInvalidOptions, "no listener to secure"},
		{"missing cert file", ServerOptions{StoreDir: "x", Listen: ":-1", Token: "t", TLSCert: "/nonexistent/c.pem", TLSKey: "/nonexistent/k.pem"}, ErrInvalidOptions, "nats.tls.cert: /nonexistent/c.pem: no such file"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			s, err := StartServer(c.o)
			if err == nil {
				s.Shutdown()
				t.Fatal("StartServer succeeded")
			}
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("StartServer = %v, want %v saying %q", err, c.err, c.want)
			}
		})
	}
}

// TestServer_Shutdown checks that tasks survive a restart of the server on
// the same store, and that a connection rides over the restart.
func TestServer_Shutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server")
	}
	t.Parallel()
	store := t.TempDir()
	s1, err := StartServer(ServerOptions{StoreDir: store, Listen: "127.0.0.1:-1", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	url := s1.ClientURL()
	var log logBuffer
	c, err := Connect(testCtx(t, 10*time.Second), Options{URL: url, Token: "tok", ReconnectWait: 100 * time.Millisecond, Logger: log.logger()})
	if err != nil {
		s1.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
		t.Fatal(err)
	}
	publishTasks(t, c, testTask(t, "j", 1, 5))
	s1.Shutdown()
	eventually(t, 30*time.Second, "logged the disconnection", func() bool { return strings.Contains(log.String(), "disconnected") })

	listen := strings.TrimPrefix(url, "nats://")
	startServer(t, ServerOptions{StoreDir: store, Listen: listen, Token: "tok"})
	eventually(t, 30*time.Second, "reconnected", func() bool { return strings.Contains(log.String(), "reconnected") })
	m := nextTask(t, taskSource(t, c))
	if m.Task.JobID != "j" || m.Task.TaskID != 1 {
		t.Errorf("after restart got %v, want task j/1", &m.Task)
	}
	if err := m.Ack(testCtx(t, 10*time.Second)); err != nil {
		t.Error(err)
	}
}
