package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// watchedBuffer collects the output of a command running in a goroutine,
// and lets a test wait for a line.
type watchedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced at each write
}

func newWatchedBuffer() *watchedBuffer {
	return &watchedBuffer{changed: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.buf.Write(p)
}

// String returns everything written so far.
func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitLine waits until a complete line containing substr was written, and
// returns it. It fails the test if done is closed first (the command
// ended without writing it).
func (w *watchedBuffer) waitLine(tb testing.TB, substr string, done <-chan struct{}) string {
	tb.Helper()
	for {
		w.mu.Lock()
		text, changed := w.buf.String(), w.changed
		w.mu.Unlock()
		for _, line := range strings.SplitAfter(text, "\n") {
			if strings.HasSuffix(line, "\n") && strings.Contains(line, substr) {
				return strings.TrimSuffix(line, "\n")
			}
		}
		select {
		case <-changed:
		case <-done:
			tb.Fatalf("the command ended without writing a line containing %q; it wrote:\n%s", substr, w.String())
		}
	}
}

// bgCommand is a command run by Run in a goroutine.
type bgCommand struct {
	stdout, stderr *watchedBuffer
	cancel         context.CancelFunc
	done           chan struct{}
	err            error
}

// startCommand runs c4book with args in a goroutine, until it returns or stop is
// called.
func startCommand(tb testing.TB, args ...string) *bgCommand {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &bgCommand{stdout: newWatchedBuffer(), stderr: newWatchedBuffer(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err = Run(ctx, args, strings.NewReader(""), b.stdout, b.stderr)
	}()
	tb.Cleanup(func() { b.stop() })
	return b
}

// wait waits for the command to return and returns what it did.
func (b *bgCommand) wait() result {
	<-b.done
	return result{stdout: b.stdout.String(), stderr: b.stderr.String(), err: b.err}
}

// stop cancels the command's context (Ctrl-C) and waits for it.
func (b *bgCommand) stop() result {
	b.cancel()
	return b.wait()
}

// testServer starts a NATS server with JetStream listening on a free port
// of the loopback interface, requiring token, and returns its URL.
func testServer(tb testing.TB, token string) string {
	tb.Helper()
	return testServerAt(tb, "127.0.0.1:0", token)
}

// testServerAt starts a NATS server with JetStream listening on addr
// (HOST:PORT), requiring token, and returns its URL.
func testServerAt(tb testing.TB, addr, token string) string {
	tb.Helper()
	srv, err := queue.StartServer(queue.ServerOptions{StoreDir: filepath.Join(tb.TempDir(), "nats"), Listen: addr, Token: token})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

// checkGeneratedBook checks that the book at path holds every non-terminal position
// of board b up to depth, and that one position in every sample has the
// solver's score. It returns the number of positions.
func checkGeneratedBook(tb testing.TB, path string, b *solver.Board, root string, depth, sample int) int {
	tb.Helper()
	bk, err := book.Open(path, &book.Options{Board: b, ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer bk.Close()
	s, err := solver.New(b, 4<<20)
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[uint64]bool{}
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if p.Moves() > 0 && p.LastMoveWon() || seen[p.CanonicalKey()] {
			return
		}
		seen[p.CanonicalKey()] = true
		v, ok, err := bk.Get(p)
		if err != nil || !ok {
			tb.Fatalf("position not in the book (%v):\n%v", err, p)
		}
		if len(seen)%sample == 0 {
			if want := s.Solve(p); v.Score != want {
				tb.Fatalf("book score %d, solver %d:\n%v", v.Score, want, p)
			}
		}
		if p.Moves() == depth {
			return
		}
		for col := range b.Width() {
			if p.CanPlay(col) {
				child := p
				child.Play(col)
				walk(child)
			}
		}
	}
	r, err := b.Parse(root)
	if err != nil {
		tb.Fatal(err)
	}
	walk(r)
	return len(seen)
}

func TestWorkerCommandLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		nats config.NATS
		want string
	}{
		{"token", config.NATS{Token: "secret"}, "C4BOOK_NATS_TOKEN=<nats.token> c4book worker --nats nats://h:4222"},
		{"user", config.NATS{User: "bob smith", Password: "secret"}, "C4BOOK_NATS_USER='bob smith' C4BOOK_NATS_PASSWORD=<nats.password> c4book worker --nats nats://h:4222"},
		{"mutual TLS", config.NATS{TLS: config.TLS{Cert: "/etc/c.pem", Key: "/etc/k.pem", CA: "/etc/ca.pem"}},
			"C4BOOK_NATS_TLS_CA=<CA file of the server certificate> C4BOOK_NATS_TLS_CERT=<client certificate> C4BOOK_NATS_TLS_KEY=<client key> c4book worker --nats nats://h:4222"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.NATS = c.nats
			got := workerCommandLine(cfg, "nats://h:4222", false)
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("a secret is printed: %s", got)
			}
		})
	}
}
