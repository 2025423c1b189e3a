package queue

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestConnect_auth(t *testing.T) {
	t.Parallel()
	token := startServer(t, ServerOptions{Listen: "127.0.0.1:-1", Token: "s3cret"})
	user := startServer(t, ServerOptions{Listen: "127.0.0.1:-1", User: "worker", Password: "pw"})
	cases := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"right token", Options{URL: token.ClientURL(), Token: "s3cret"}, true},
		{"token in URL", Options{URL: strings.Replace(token.ClientURL(), "nats://", "nats://s3cret@", 1)}, true},
		{"wrong token", Options{URL: token.ClientURL(), Token: "guess"}, false},
		{"missing token", Options{URL: token.ClientURL()}, false},
		{"right password", Options{URL: user.ClientURL(), User: "worker", Password: "pw"}, true},
		{"wrong password", Options{URL: user.ClientURL(), User: "worker", Password: "nope"}, false},
		{"token for a user server", Options{URL: user.ClientURL(), Token: "s3cret"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A refused credential must fail at once, not retry until the
			// context ends: the error would then be the context's.
			conn, err := Connect(testCtx(t, 20*time.Second), c.o)
			if c.ok {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				if err := conn.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
					t.Errorf("EnsureStreams: %v", err)
				}
				conn.Close()
				return
			}
			if err == nil {
				conn.Close()
				t.Fatal("Connect succeeded")
			}
			t.Logf("Connect: %v", err)
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("Connect = %v, want ErrAuth", err)
			}
			if Transient(err) {
				t.Errorf("Transient(%v) = true: refused credentials would be tried again forever", err)
			}
			want := "nats: authorization violation: check nats.token / nats.user / nats.creds"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
	t.Run("in-process with the server's token", func(t *testing.T) {
		connectTo(t, token, "local")
		connectTo(t, user, "local")
	})
}

func TestConnect_TLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	s := startServer(t, ServerOptions{Listen: "127.0.0.1:-1", Token: "tok", TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, TLSCA: pki.CA})
	url := s.ClientURL()
	if !strings.HasPrefix(url, "tls://127.0.0.1:") {
		t.Fatalf("ClientURL = %q, want tls://127.0.0.1:<port>", url)
	}
	withCert := Options{URL: url, Token: "tok", TLSCA: pki.CA, TLSCert: pki.ClientCert, TLSKey: pki.ClientKey}

	t.Run("trusted, with client certificate", func(t *testing.T) {
		c, err := Connect(testCtx(t, 20*time.Second), withCert)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer c.Close()
		if err := c.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
			t.Fatal(err)
		}
		publishTasks(t, c, testTask(t, "tls", 1, 2))
	})
	t.Run("localhost name", func(t *testing.T) {
		o := withCert
		o.URL = strings.Replace(url, "127.0.0.1", "localhost", 1)
		c, err := Connect(testCtx(t, 20*time.Second), o)
		if err != nil {
			t.Fatalf("Connect(%s): %v", o.URL, err)
		}
		c.Close()
	})
	t.Run("untrusted server", func(t *testing.T) {
		o := withCert
		o.TLSCA = pki.OtherCA
		c, err := Connect(testCtx(t, 20*time.Second), o)
		if err == nil {
			c.Close()
			t.Fatal("Connect trusted a server signed by another CA")
		}
		t.Logf("Connect: %v", err)
		if !strings.Contains(err.Error(), "nats.tls.ca") {
			t.Errorf("error %q does not point at nats.tls.ca", err)
		}
		if Transient(err) {
			t.Errorf("Transient(%v) = true: an untrusted server would be tried again forever", err)
		}
	})
	t.Run("no client certificate", func(t *testing.T) {
		o := withCert
		o.TLSCert, o.TLSKey = "", ""
		c, err := Connect(testCtx(t, 20*time.Second), o)
		if err == nil {
			c.Close()
			t.Fatal("Connect succeeded without a client certificate")
		}
		t.Logf("Connect: %v", err)
	})
	t.Run("in-process", func(t *testing.T) {
		c := connectTo(t, s, "local")
		if _, err := c.Tasks(testCtx(t, 10*time.Second)); err != nil && !errors.Is(err, ErrNotReady) {
			t.Fatal(err)
		}
	})
}

func TestConnect_errors(t *testing.T) {
	if _, err := Connect(testCtx(t, 5*time.Second), Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Connect without URL = %v, want ErrInvalidOptions", err)
	}
	_, err := Connect(testCtx(t, 5*time.Second), Options{URL: "nats://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Errorf("Connect to a closed port = %v, want an error naming the URL", err)
	}
	// Nothing listening: a server that may come, waited for by a caller
	// that retries passing errors.
	if !errors.Is(err, ErrUnreachable) || !Transient(err) {
		t.Errorf("Connect to a closed port = %v, want ErrUnreachable, Transient", err)
	}
	_, err = Connect(testCtx(t, 5*time.Second), Options{URL: "nats://tok3n@127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "tok3n") {
		t.Errorf("Connect = %v, want an error that hides the token", err)
	}
	if _, err := Connect(testCtx(t, 5*time.Second), Options{URL: "nats://127.0.0.1:1", TLSCert: "c"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Connect with a certificate and no key = %v, want ErrInvalidOptions", err)
	}
}

// TestConnect_missingFiles: a credentials or TLS file that cannot be read
// fails Connect at once, naming its key and its path, and is not Transient
// (a worker would wait for its server forever): before, nats.go reported
// it as a server that does not answer. The embedded server refuses its own
// the same way.
func TestConnect_missingFiles(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"CA missing", Options{TLSCA: missing}, []string{"nats.tls.ca", missing, "no such file"}},
		{"CA not a certificate", Options{TLSCA: garbage}, []string{"nats.tls.ca", garbage, "no PEM certificate"}},
		{"certificate missing", Options{TLSCert: missing, TLSKey: pki.ClientKey}, []string{"nats.tls.cert", missing}},
		{"key missing", Options{TLSCert: pki.ClientCert, TLSKey: missing}, []string{"nats.tls.key", missing}},
		{"key of another certificate", Options{TLSCert: pki.ClientCert, TLSKey: pki.ServerKey}, []string{"nats.tls.cert", "nats.tls.key"}},
		{"credentials missing", Options{Creds: missing}, []string{"nats.creds", missing, "no such file"}},
		{"credentials not credentials", Options{Creds: garbage}, []string{"nats.creds", garbage}},
		{"worker key missing", Options{NKey: missing}, []string{"nats.nkey", missing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.URL = "tls://127.0.0.1:1" // nothing listens: the files fail first
			_, err := Connect(testCtx(t, 5*time.Second), o)
			if err == nil || Transient(err) || !errors.Is(err, ErrInvalidOptions) && !errors.Is(err, ErrKeyFile) {
				t.Fatalf("Connect = %v, want an error that is not Transient", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	t.Run("embedded server", func(t *testing.T) {
		_, err := StartServer(ServerOptions{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Token: "tok",
			TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, TLSCA: missing})
		if err == nil || !strings.Contains(err.Error(), "nats.tls.ca: "+missing) {
			t.Errorf("StartServer = %v, want an error naming nats.tls.ca and %s", err, missing)
		}
	})
}

// TestConn_stillDisconnected: while its server is gone, a connection says
// so at every interval (a minute; shorter here) with how long it has
// waited, and stops saying it once it is back, which it says as loud.
func TestConn_stillDisconnected(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s1, err := StartServer(ServerOptions{StoreDir: store, Listen: "127.0.0.1:-1", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	url := s1.ClientURL()
	var log logBuffer
	c, err := Connect(testCtx(t, 10*time.Second), Options{URL: url, Token: "tok", ReconnectWait: 50 * time.Millisecond, Logger: log.logger(), downEvery: 100 * time.Millisecond})
	if err != nil {
		s1.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s1.Shutdown()
	stillLines := func() int { return strings.Count(log.String(), "nats: still disconnected, reconnecting") }
	eventually(t, 30*time.Second, "said twice that it is still disconnected", func() bool { return stillLines() >= 2 })
	if !strings.Contains(log.String(), "waited=") {
		t.Errorf("the lines do not say how long it waited:\n%s", log.String())
	}
	startServer(t, ServerOptions{StoreDir: store, Listen: strings.TrimPrefix(url, "nats://"), Token: "tok"})
	// At the warning's level: a command logs a connection's warnings only.
	eventually(t, 30*time.Second, "reconnected", func() bool { return strings.Contains(log.String(), `level=WARN msg="nats: reconnected"`) })
	// The watch ends at its next tick: the count stops growing.
	eventually(t, 30*time.Second, "quiet once reconnected", func() bool {
		n := stillLines()
		time.Sleep(300 * time.Millisecond)
		return stillLines() == n
	})
}

// kick closes c's connection from the server's side, as a server that
// stops does (nats.go's ForceReconnect is not the same: it ends the
// requests in flight itself); c reconnects.
func kick(tb testing.TB, s *Server, c *Conn) {
	tb.Helper()
	id, err := c.nc.GetClientID()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.ns.DisconnectClientByID(id); err != nil {
		tb.Fatal(err)
	}
}

// TestConn_publish_connectionLost: a publish whose connection is lost
// while it waits for the server's ack, which then never comes, is made
// again as soon as the connection is back, not after publishAttemptWait
// (a worker's result, in flight when the server stopped, held its worker
// up for so long).
func TestConn_publish_connectionLost(t *testing.T) {
	t.Parallel()
	s := startServer(t, ServerOptions{})
	c := connectTo(t, s, "publisher")
	server := connectTo(t, s, "stand-in")
	// The stand-in for a stream leaves the first request unanswered, as a
	// server that stopped with it, and acks the next.
	first := make(chan struct{})
	var requests atomic.Int32
	if _, err := server.nc.Subscribe("lost.reply", func(m *nats.Msg) {
		if requests.Add(1) == 1 {
			close(first)
			return
		}
		_ = m.Respond([]byte(`{"stream":"S","seq":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.publish(testCtx(t, 60*time.Second), nats.NewMsg("lost.reply"), "lost/1") }()
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("the publish never came")
	}
	lost := time.Now()
	kick(t, s, c)
	if err := <-done; err != nil {
		t.Fatalf("publish: %v", err)
	}
	if waited := time.Since(lost); waited >= publishAttemptWait/2 {
		t.Errorf("publish returned %v after the connection was lost: want it made again once the connection is back, not after the %v of an attempt", waited.Round(time.Millisecond), publishAttemptWait)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestTaskMsg_ack_connectionLost: an ack that the server has not
// confirmed (here, never will: its consumer was made again) returns an
// error when the connection is lost, not after ackConfirmWait: the
// coordinator's acks of results hold up the job while they wait.
func TestTaskMsg_ack_connectionLost(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	worker := connectTo(t, s, "worker")
	publishTasks(t, coord, testTask(t, "j1", 1, 2))
	m := nextTask(t, taskSource(t, worker))
	ctx := testCtx(t, 30*time.Second)
	if err := coord.js.DeleteConsumer(ctx, TaskStream, LaneConsumer(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := coord.RepairQueue(ctx, testStreams, "j1"); err != nil {
		t.Fatal(err)
	}
	sent := worker.nc.Stats().OutMsgs
	done := make(chan error, 1)
	go func() { done <- m.Ack(ctx) }()
	eventually(t, 10*time.Second, "the ack sent", func() bool { return worker.nc.Stats().OutMsgs > sent })
	lost := time.Now()
	kick(t, s, worker)
	err := <-done
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Ack = %v (test context: %v); want an error before the context ends", err, ctx.Err())
	}
	if waited := time.Since(lost); waited >= ackConfirmWait/2 {
		t.Errorf("Ack returned %v after the connection was lost: want at once, not after ackConfirmWait (%v)", waited.Round(time.Millisecond), ackConfirmWait)
	}
	t.Logf("Ack: %v", err)
}
