package queue

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// natsServerBinary returns the path of a nats-server binary, found as
// scripts/lib.sh finds it (PATH, GOBIN, GOPATH/bin), or skips the test.
func natsServerBinary(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	dirs := []string{os.Getenv("GOBIN")}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = append(dirs, filepath.Join(strings.TrimSpace(string(gopath)), "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "nats-server"); d != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	tb.Skip("no nats-server binary (PATH, GOBIN, GOPATH/bin): go install github.com/nats-io/nats-server/v2@v2.15.2 to run this test")
	return ""
}

// lockedBuffer is a bytes.Buffer safe for a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestExternalServer_workerKeys runs a real nats-server with the shipped
// scripts/deploy/nats-server-keys.conf and the users ServerConfUsers writes:
// the same refusals as on the embedded server, an observer that reads the
// status and nothing else, and a worker removed by writing the users
// again and reloading the server.
func TestExternalServer_workerKeys(t *testing.T) {
	bin := natsServerBinary(t)
	dir := t.TempDir()
	keys := map[string]string{}
	pubs := map[string]string{}
	roles := map[string]Role{"alice": RoleWorker, "bob": RoleWorker, "eve": RoleWorker, "ops": RoleObserver}
	for name, role := range roles {
		keys[name] = filepath.Join(dir, name+".nkey")
		pub, err := WriteKey(keys[name], name, role)
		if err != nil {
			t.Fatal(err)
		}
		pubs[name] = pub
	}
	conf, err := os.ReadFile(filepath.Join("..", "scripts", "deploy", "nats-server-keys.conf"))
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "nats-server-keys.conf")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	writeUsers := func(names ...string) {
		var ws []WorkerKey
		for _, n := range names {
			ws = append(ws, WorkerKey{Name: n, PublicKey: pubs[n], Role: roles[n]})
		}
		if err := os.WriteFile(filepath.Join(dir, "c4book-workers.conf"), ServerConfUsers(ws), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeUsers("alice", "bob", "ops")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var out lockedBuffer
	cmd := exec.Command(bin, "-c", confPath)
	cmd.Env = append(os.Environ(), "C4BOOK_NATS_HOST=127.0.0.1", fmt.Sprintf("C4BOOK_NATS_PORT=%d", port),
		"C4BOOK_NATS_STORE="+filepath.Join(dir, "store"), "C4BOOK_NATS_USER=coordinator", "C4BOOK_NATS_PASSWORD=pw5e3cret")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("nats-server's log:\n%s", out.String())
		}
	})
	eventually(t, 10*time.Second, "nats-server ready", func() bool { return strings.Contains(out.String(), "Server is ready") })
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	ctx := testCtx(t, 60*time.Second)
	coord, err := Connect(ctx, Options{URL: url, User: "coordinator", Password: "pw5e3cret"})
	if err != nil {
		t.Fatalf("coordinator: %v", err)
	}
	t.Cleanup(func() { coord.Close() })
	if err := coord.EnsureStreams(ctx, testStreams); err != nil {
		t.Fatal(err)
	}
	publishTasks(t, coord, testTask(t, "job1", 1, 2))
	dial := func(name string) (*Conn, error) {
		c, err := Connect(testCtx(t, 10*time.Second), Options{URL: url, NKey: keys[name], ReconnectWait: 50 * time.Millisecond})
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}

	// alice solves a task end to end.
	alice, err := dial("alice")
	if err != nil {
		t.Fatalf("alice: %v", err)
	}
	m := nextTask(t, taskSource(t, alice))
	if err := alice.PublishResult(ctx, resultFor(m.Task, "alice")); err != nil {
		t.Fatal(err)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if err := alice.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "alice"}); err != nil {
		t.Fatal(err)
	}
	res, err := coord.Results(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if rm, err := res.Next(ctx); err != nil || rm.Publisher != "alice" {
		t.Fatalf("result: %v, %v; want alice's", rm, err)
	}

	// eve's key is not in the file.
	if _, err := dial("eve"); !errors.Is(err, ErrAuth) {
		t.Errorf("eve: %v, want ErrAuth", err)
	}
	// alice may not act as bob nor touch the streams.
	publishTasks(t, coord, testTask(t, "job1", 2, 2))
	nc, errs := rawConn(t, url, keys["alice"], "alice")
	for _, subject := range []string{
		WorkerResultSubject("job1", "bob"),
		"$JS.API.STREAM.PURGE." + TaskStream,
		"$JS.API.CONSUMER.DELETE." + TaskStream + "." + LaneConsumer(0),
		"$JS.API.STREAM.MSG.GET." + ResultStream,
	} {
		if _, err := nc.RequestWithContext(testCtx(t, 300*time.Millisecond), subject, []byte("{}")); err == nil {
			t.Errorf("%s: answered", subject)
		}
		wantViolation(t, errs, "Publish", subject)
	}
	if n := streamMsgs(t, coord, TaskStream); n != 1 {
		t.Errorf("task stream holds %d, want 1", n)
	}

	// ops, an observer, reads the status and may not write it, nor
	// create the consumer nats.go's KV lister would.
	ops, err := dial("ops")
	if err != nil {
		t.Fatalf("ops: %v", err)
	}
	if ws, err := ops.Workers(ctx); err != nil || len(ws) != 1 || ws[0].WorkerID != "alice" {
		t.Errorf("the observer's Workers = %+v, %v; want alice's status", ws, err)
	}
	nc, errs = rawConn(t, url, keys["ops"], "ops")
	for _, subject := range []string{
		"$KV." + StatusBucket + "." + workerKey("ops"),
		"$JS.API.CONSUMER.CREATE." + statusStream + ".w1.$KV." + StatusBucket + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + TaskStream + "." + LaneConsumer(0),
	} {
		if _, err := nc.RequestWithContext(testCtx(t, 300*time.Millisecond), subject, []byte("{}")); err == nil {
			t.Errorf("%s: answered", subject)
		}
		wantViolation(t, errs, "Publish", subject)
	}

	// bob removed: the users written again, the server reloaded.
	bob, err := dial("bob")
	if err != nil {
		t.Fatalf("bob: %v", err)
	}
	writeUsers("alice", "ops")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "bob cut off", func() bool {
		return bob.PublishResult(testCtx(t, 200*time.Millisecond), resultFor(testTask(t, "job1", 2, 2), "bob")) != nil
	})
	if _, err := dial("bob"); !errors.Is(err, ErrAuth) {
		t.Errorf("bob after the reload: %v, want ErrAuth", err)
	}
	if err := alice.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "alice"}); err != nil {
		t.Errorf("alice after the reload: %v", err)
	}
}
