package queue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// keyed is an embedded server listening on loopback with worker keys, its
// coordinator's connection (the server's own key, every right) and the
// key files of the workers it accepts.
type keyed struct {
	srv   *Server
	coord *Conn
	keys  map[string]string // worker name -> key file
	pubs  map[string]string // worker name -> public key
}

// startKeyed starts a server that accepts the named workers by key (and
// nothing else but its own coordinator), with the streams set up; the
// key files of extra names are made but not registered.
func startKeyed(tb testing.TB, registered []string, extra ...string) *keyed {
	tb.Helper()
	return startKeys(tb, registered, nil, extra...)
}

// startKeys is startKeyed with observers registered too.
func startKeys(tb testing.TB, workers, observers []string, extra ...string) *keyed {
	tb.Helper()
	k := &keyed{keys: map[string]string{}, pubs: map[string]string{}}
	dir := tb.TempDir()
	var ws []WorkerKey
	add := func(name string, role Role, register bool) {
		path := filepath.Join(dir, name+".nkey")
		pub, err := WriteKey(path, name, role)
		if err != nil {
			tb.Fatal(err)
		}
		k.keys[name], k.pubs[name] = path, pub
		if register {
			ws = append(ws, WorkerKey{Name: name, PublicKey: pub, Role: role})
		}
	}
	for _, name := range workers {
		add(name, RoleWorker, true)
	}
	for _, name := range observers {
		add(name, RoleObserver, true)
	}
	for _, name := range extra {
		add(name, RoleWorker, false)
	}
	k.srv = startServer(tb, ServerOptions{Listen: "127.0.0.1:0", Workers: ws})
	k.coord = connectTo(tb, k.srv, "coordinator")
	if err := k.coord.EnsureStreams(testCtx(tb, 30*time.Second), testStreams); err != nil {
		tb.Fatalf("EnsureStreams: %v", err)
	}
	return k
}

// connectWorker connects as worker (or observer) name with its key file.
func (k *keyed) connectWorker(tb testing.TB, name string) (*Conn, error) {
	tb.Helper()
	c, err := Connect(testCtx(tb, 10*time.Second), Options{URL: k.srv.ClientURL(), Name: name, NKey: k.keys[name], ReconnectWait: 50 * time.Millisecond})
	if err == nil {
		tb.Cleanup(func() { c.Close() })
	}
	return c, err
}

// rawWorker is a plain nats.go connection with worker name's key, as an
// attacker holding that key would write, whose asynchronous errors (the
// server's permission errors) go to errs.
func (k *keyed) rawWorker(tb testing.TB, name string) (*nats.Conn, chan error) {
	tb.Helper()
	return rawConn(tb, k.srv.ClientURL(), k.keys[name], name)
}

// rawConn connects to url with the key file of worker name, with plain
// nats.go; the connection's asynchronous errors go to errs.
func rawConn(tb testing.TB, url, keyFile, name string) (*nats.Conn, chan error) {
	tb.Helper()
	nk, err := nats.NkeyOptionFromSeed(keyFile)
	if err != nil {
		tb.Fatal(err)
	}
	errs := make(chan error, 16)
	nc, err := nats.Connect(url, nk, nats.CustomInboxPrefix(WorkerInbox(name)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		tb.Fatalf("connect as %s: %v", name, err)
	}
	tb.Cleanup(nc.Close)
	return nc, errs
}

// wantViolation waits for the server's permission error naming op ("Publish"
// or "Subscription") and subject.
func wantViolation(tb testing.TB, errs chan error, op, subject string) {
	tb.Helper()
	want := strings.ToLower("permissions violation for " + op + " to \"" + subject + "\"")
	timeout := time.After(5 * time.Second)
	for {
		select {
		case err := <-errs:
			if strings.Contains(strings.ToLower(err.Error()), want) {
				tb.Logf("refused: %v", err)
				return
			}
			tb.Logf("other error: %v", err)
		case <-timeout:
			tb.Fatalf("no permission error %q from the server", want)
		}
	}
}

func TestServer_workerKey(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice"})
	w, err := k.connectWorker(t, "alice")
	if err != nil {
		t.Fatalf("registered worker refused: %v", err)
	}
	ctx := testCtx(t, 30*time.Second)
	task := testTask(t, "job1", 1, 3)
	publishTasks(t, k.coord, task)
	src := taskSource(t, w)
	if src.AckWait() != testStreams.AckWait {
		t.Errorf("AckWait = %v, want %v", src.AckWait(), testStreams.AckWait)
	}
	m := nextTask(t, src)
	if err := m.InProgress(); err != nil {
		t.Fatal(err)
	}
	if err := w.PublishResult(ctx, resultFor(m.Task, "alice")); err != nil {
		t.Fatalf("PublishResult: %v", err)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "alice"}); err != nil {
		t.Fatalf("PutWorkerStatus: %v", err)
	}
	if ws, err := k.coord.Workers(ctx); err != nil || len(ws) != 1 || ws[0].WorkerID != "alice" {
		t.Errorf("Workers = %v, %v", ws, err)
	}
	if err := w.RemoveWorkerStatus(ctx, "alice"); err != nil {
		t.Fatalf("RemoveWorkerStatus: %v", err)
	}
	res, err := k.coord.Results(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	rm, err := res.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rm.Publisher != "alice" || rm.Result.WorkerID != "alice" {
		t.Errorf("result published by %q, claims %q; want alice", rm.Publisher, rm.Result.WorkerID)
	}
}

func TestServer_workerKeyRefused(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice"}, "eve")
	_, err := k.connectWorker(t, "eve")
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("unregistered key: %v, want ErrAuth", err)
	}
	// No key at all, and a token the server does not have.
	for _, o := range []Options{{URL: k.srv.ClientURL()}, {URL: k.srv.ClientURL(), Token: "guess"}} {
		if c, err := Connect(testCtx(t, 10*time.Second), o); !errors.Is(err, ErrAuth) {
			if c != nil {
				c.Close()
			}
			t.Errorf("Connect(%+v) = %v, want ErrAuth", o, err)
		}
	}
	// A key file others may read is refused before it is used.
	loose := filepath.Join(t.TempDir(), "loose.nkey")
	data, _ := os.ReadFile(k.keys["alice"])
	if err := os.WriteFile(loose, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(testCtx(t, 10*time.Second), Options{URL: k.srv.ClientURL(), NKey: loose}); !errors.Is(err, ErrKeyFile) {
		t.Errorf("key file of mode 0644: %v, want ErrKeyFile", err)
	}
	// A key file is never overwritten.
	if _, err := WriteWorkerKey(k.keys["alice"], "alice"); err == nil {
		t.Error("WriteWorkerKey overwrote a key file")
	}
}

// TestServer_workerPermissions: what a worker's key may not do, each an
// error of the server's, and nothing changed.
func TestServer_workerPermissions(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice", "bob"})
	ctx := testCtx(t, 30*time.Second)
	publishTasks(t, k.coord, testTask(t, "job1", 1, 2), testTask(t, "job2", 2, 2))
	// bob's result of job2, for alice to try to read.
	bob, err := k.connectWorker(t, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.PublishResult(ctx, resultFor(testTask(t, "job2", 2, 2), "bob")); err != nil {
		t.Fatal(err)
	}
	nc, errs := k.rawWorker(t, "alice")
	data, err := (&Result{JobID: "job1", TaskID: 1, WorkerID: "bob", Keys: []uint64{1}, Scores: []int8{0}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	publish := []struct{ what, subject string }{
		{"a result under bob's subject", WorkerResultSubject("job1", "bob")},
		{"a result on the per-job subject", ResultSubject("job1")},
		{"a task", TaskLaneSubject("job1", 0)},
		{"a purge of the task stream", "$JS.API.STREAM.PURGE." + TaskStream},
		{"a deletion of the task stream", "$JS.API.STREAM.DELETE." + TaskStream},
		{"a deletion of the workers' consumer", "$JS.API.CONSUMER.DELETE." + TaskStream + "." + LaneConsumer(0)},
		{"a consumer of its own on the results", "$JS.API.CONSUMER.CREATE." + ResultStream},
		{"a read of bob's result", "$JS.API.STREAM.MSG.GET." + ResultStream},
		{"a direct read of bob's result", "$JS.API.DIRECT.GET." + ResultStream},
		{"a purge of the results consumer's job", "$JS.API.STREAM.PURGE." + ResultStream},
		{"bob's status", "$KV." + StatusBucket + "." + workerKey("bob")},
		{"a read of the status bucket", "$JS.API.STREAM.MSG.GET.KV_" + StatusBucket},
		{"a direct read of the job's status", "$JS.API.DIRECT.GET.KV_" + StatusBucket + ".$KV." + StatusBucket + "." + jobKey("job1")},
		{"the job's status", "$KV." + StatusBucket + "." + jobKey("job1")},
	}
	for _, p := range publish {
		t.Run("publish "+p.what, func(t *testing.T) {
			// A request: an attacker waits for the answer, which never comes.
			_, err := nc.RequestWithContext(testCtx(t, 300*time.Millisecond), p.subject, data)
			if err == nil {
				t.Fatalf("%s: answered", p.subject)
			}
			wantViolation(t, errs, "Publish", p.subject)
		})
	}
	for _, subject := range []string{"c4book.results.>", ResultSubject("job2") + ".bob", "_INBOX.>", WorkerInbox("bob") + ".>", "$JS.EVENT.>"} {
		t.Run("subscribe "+subject, func(t *testing.T) {
			sub, err := nc.SubscribeSync(subject)
			if err == nil {
				defer sub.Unsubscribe()
			}
			_ = nc.Flush()
			wantViolation(t, errs, "Subscription", subject)
		})
	}
	// alice's own status key, with a status claiming to be bob's: allowed
	// by the server, not shown as bob.
	if _, err := nc.Request("$KV."+StatusBucket+"."+workerKey("alice"), []byte(`{"worker_id":"bob"}`), 5*time.Second); err != nil {
		t.Fatalf("alice's own status key: %v", err)
	}
	if ws, err := k.coord.Workers(ctx); err != nil || len(ws) != 0 {
		t.Errorf("Workers = %+v, %v; want none (a status under alice's key claiming bob's id is skipped)", ws, err)
	}
	// Nothing changed: both tasks, bob's one result, the consumer.
	if n := streamMsgs(t, k.coord, TaskStream); n != 2 {
		t.Errorf("task stream holds %d, want 2", n)
	}
	if n := streamMsgs(t, k.coord, ResultStream); n != 1 {
		t.Errorf("result stream holds %d, want bob's 1", n)
	}
	if _, err := k.coord.Tasks(ctx); err != nil {
		t.Errorf("the workers' consumer: %v", err)
	}
}

// clusterAtWork gives k's server what an observer may look at: the
// status of job1, alice's status, two tasks and a result of bob's. It
// returns the job's status as put.
func clusterAtWork(t *testing.T, k *keyed) JobStatus {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	job := JobStatus{JobID: "job1", State: "solving", Total: 100, Done: 40}
	if err := k.coord.PutJobStatus(ctx, job); err != nil {
		t.Fatal(err)
	}
	alice, err := k.connectWorker(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "alice", Solved: 7}); err != nil {
		t.Fatal(err)
	}
	publishTasks(t, k.coord, testTask(t, "job1", 1, 2), testTask(t, "job1", 2, 2))
	bob, err := k.connectWorker(t, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.PublishResult(ctx, resultFor(testTask(t, "job1", 1, 2), "bob")); err != nil {
		t.Fatal(err)
	}
	return job
}

// readsStatus checks that c reads what clusterAtWork put: job1's status
// and alice's.
func readsStatus(t *testing.T, c *Conn, job JobStatus) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	if ws, err := c.Workers(ctx); err != nil || len(ws) != 1 || ws[0].WorkerID != "alice" || ws[0].Solved != 7 {
		t.Errorf("Workers = %+v, %v; want alice's status", ws, err)
	}
	if js, err := c.Jobs(ctx); err != nil || len(js) != 1 || js[0].JobID != job.JobID || js[0].Done != job.Done {
		t.Errorf("Jobs = %+v, %v; want %+v", js, err, job)
	}
	if s, err := c.JobStatus(ctx, job.JobID); err != nil || s.State != job.State || s.Total != job.Total {
		t.Errorf("JobStatus(%s) = %+v, %v; want %+v", job.JobID, s, err, job)
	}
	if _, err := c.JobStatus(ctx, "job2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("JobStatus(job2) = %v, want ErrNotFound", err)
	}
}

// TestServer_observerPermissions: an observer's key reads the cluster's
// status, all that c4book status reads, and the server refuses it every
// write: those a worker's key may do and those only the coordinator may.
func TestServer_observerPermissions(t *testing.T) {
	t.Parallel()
	k := startKeys(t, []string{"alice", "bob"}, []string{"ops"})
	job := clusterAtWork(t, k)
	ops, err := k.connectWorker(t, "ops")
	if err != nil {
		t.Fatalf("registered observer refused: %v", err)
	}
	readsStatus(t, ops, job)

	nc, errs := k.rawWorker(t, "ops")
	kv := "$KV." + StatusBucket + "."
	publish := []struct{ what, subject string }{
		// What a worker may do.
		{"a result under its own name", WorkerResultSubject("job1", "ops")},
		{"a result under alice's name", WorkerResultSubject("job1", "alice")},
		{"binding the workers' consumer", "$JS.API.CONSUMER.INFO." + TaskStream + "." + LaneConsumer(0)},
		{"a task pull", "$JS.API.CONSUMER.MSG.NEXT." + TaskStream + "." + LaneConsumer(0)},
		{"an ack of a task", fmt.Sprintf("$JS.ACK.%s.%s.1.1.1.0.0", TaskStream, LaneConsumer(0))},
		{"binding the result stream", "$JS.API.STREAM.INFO." + ResultStream},
		{"a status of its own", kv + workerKey("ops")},
		{"alice's status", kv + workerKey("alice")},
		// What only the coordinator may do.
		{"the job's status", kv + jobKey("job1")},
		{"a task", TaskLaneSubject("job1", 0)},
		{"a purge of the task stream", "$JS.API.STREAM.PURGE." + TaskStream},
		{"a deletion of the task stream", "$JS.API.STREAM.DELETE." + TaskStream},
		{"a stream of its own", "$JS.API.STREAM.CREATE.MINE"},
		{"a deletion of the workers' consumer", "$JS.API.CONSUMER.DELETE." + TaskStream + "." + LaneConsumer(0)},
		{"a consumer on the results", "$JS.API.CONSUMER.CREATE." + ResultStream},
		{"a read of bob's result", "$JS.API.STREAM.MSG.GET." + ResultStream},
		{"a direct read of bob's result", "$JS.API.DIRECT.GET." + ResultStream},
		{"a purge of the status bucket", "$JS.API.STREAM.PURGE." + statusStream},
		{"a deletion of the status bucket", "$JS.API.STREAM.DELETE." + statusStream},
		{"a change of the status bucket", "$JS.API.STREAM.UPDATE." + statusStream},
		{"a deletion of a status message", "$JS.API.STREAM.MSG.DELETE." + statusStream},
		// nats.go's KV watcher and key lister would create these: a push
		// consumer delivers where its creator says, into the task stream
		// too.
		{"a consumer on the status bucket", "$JS.API.CONSUMER.CREATE." + statusStream + ".w1." + kv + ">"},
		{"a consumer on the status bucket, legacy form", "$JS.API.CONSUMER.CREATE." + statusStream},
		{"a durable consumer on the status bucket", "$JS.API.CONSUMER.DURABLE.CREATE." + statusStream + ".w1"},
	}
	for _, p := range publish {
		t.Run("publish "+p.what, func(t *testing.T) {
			_, err := nc.RequestWithContext(testCtx(t, 300*time.Millisecond), p.subject, []byte("{}"))
			if err == nil {
				t.Fatalf("%s: answered", p.subject)
			}
			wantViolation(t, errs, "Publish", p.subject)
		})
	}
	for _, subject := range []string{"c4book.results.>", "c4book.tasks.>", kv + ">", "_INBOX.>", WorkerInbox("alice") + ".>", "$JS.EVENT.>"} {
		t.Run("subscribe "+subject, func(t *testing.T) {
			sub, err := nc.SubscribeSync(subject)
			if err == nil {
				defer sub.Unsubscribe()
			}
			_ = nc.Flush()
			wantViolation(t, errs, "Subscription", subject)
		})
	}

	// Nothing changed: the two tasks, bob's result, the statuses, the
	// workers' consumer and no consumer on the status bucket.
	if n := streamMsgs(t, k.coord, TaskStream); n != 2 {
		t.Errorf("task stream holds %d, want 2", n)
	}
	if n := streamMsgs(t, k.coord, ResultStream); n != 1 {
		t.Errorf("result stream holds %d, want bob's 1", n)
	}
	readsStatus(t, k.coord, job)
	ctx := testCtx(t, 30*time.Second)
	if _, err := k.coord.Tasks(ctx); err != nil {
		t.Errorf("the workers' consumer: %v", err)
	}
	s, err := k.coord.stream(ctx, statusStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Consumers != 0 {
		t.Errorf("status bucket: %v, %v; want no consumer", info, err)
	}
}

// TestServer_statusRefused: a worker's key may not read the status of
// the cluster, and the reads say so at once (ErrForbidden), rather than
// waiting for answers the server will never send.
func TestServer_statusRefused(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice", "bob"})
	clusterAtWork(t, k)
	bob, err := k.connectWorker(t, "bob")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	if ws, err := bob.Workers(ctx); !errors.Is(err, ErrForbidden) {
		t.Errorf("Workers = %+v, %v; want ErrForbidden", ws, err)
	}
	if js, err := bob.Jobs(ctx); !errors.Is(err, ErrForbidden) {
		t.Errorf("Jobs = %+v, %v; want ErrForbidden", js, err)
	}
	if s, err := bob.JobStatus(ctx, "job1"); !errors.Is(err, ErrForbidden) {
		t.Errorf("JobStatus = %+v, %v; want ErrForbidden", s, err)
	}
	if ctx.Err() != nil {
		t.Errorf("the reads waited for the test's deadline: %v", ctx.Err())
	}
	// A refusal ends the reads under way, not those that follow it.
	if err := bob.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "bob"}); err != nil {
		t.Errorf("bob's own status after the refusals: %v", err)
	}
}

// TestServer_SetWorkers_observer: observers come and go with the
// registry, as workers do: an observer added reads the status at once,
// one removed is cut off and refused.
func TestServer_SetWorkers_observer(t *testing.T) {
	t.Parallel()
	k := startKeys(t, []string{"alice", "bob"}, []string{"ops"})
	job := clusterAtWork(t, k)
	dir := t.TempDir()
	path := filepath.Join(dir, "ops2.nkey")
	pub, err := WriteKey(path, "ops2", RoleObserver)
	if err != nil {
		t.Fatal(err)
	}
	k.keys["ops2"] = path
	ops, err := k.connectWorker(t, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.srv.SetWorkers([]WorkerKey{
		{Name: "alice", PublicKey: k.pubs["alice"]},
		{Name: "bob", PublicKey: k.pubs["bob"]},
		{Name: "ops2", PublicKey: pub, Role: RoleObserver},
	}); err != nil {
		t.Fatalf("SetWorkers: %v", err)
	}
	ops2, err := k.connectWorker(t, "ops2")
	if err != nil {
		t.Fatalf("observer added: %v", err)
	}
	readsStatus(t, ops2, job)
	eventually(t, 10*time.Second, "ops cut off", func() bool {
		_, err := ops.Jobs(testCtx(t, 200*time.Millisecond))
		return err != nil
	})
	if _, err := k.connectWorker(t, "ops"); !errors.Is(err, ErrAuth) {
		t.Errorf("removed observer reconnecting: %v, want ErrAuth", err)
	}
}

// TestServer_SetWorkers: a worker removed is cut off and refused at
// reconnection while another goes on; a worker added connects at once.
func TestServer_SetWorkers(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice", "bob"}, "carol")
	ctx := testCtx(t, 30*time.Second)
	openJob(t, k.coord, "job1")
	alice, err := k.connectWorker(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := k.connectWorker(t, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.srv.SetWorkers([]WorkerKey{{Name: "alice", PublicKey: k.pubs["alice"]}, {Name: "carol", PublicKey: k.pubs["carol"]}}); err != nil {
		t.Fatalf("SetWorkers: %v", err)
	}
	// bob's connection is closed by the server; nats.go tries again and
	// is refused until it gives up.
	eventually(t, 10*time.Second, "bob cut off", func() bool {
		return bob.PublishResult(testCtx(t, 200*time.Millisecond), resultFor(testTask(t, "job1", 1, 1), "bob")) != nil
	})
	if _, err := k.connectWorker(t, "bob"); !errors.Is(err, ErrAuth) {
		t.Errorf("removed worker reconnecting: %v, want ErrAuth", err)
	}
	if _, err := k.connectWorker(t, "carol"); err != nil {
		t.Errorf("added worker: %v", err)
	}
	if err := alice.PublishResult(ctx, resultFor(testTask(t, "job1", 1, 1), "alice")); err != nil {
		t.Errorf("alice, still registered: %v", err)
	}
	if err := k.coord.PublishTasks(ctx, []Task{testTask(t, "job1", 2, 1)}); err != nil {
		t.Errorf("the coordinator after the reload: %v", err)
	}
}

// TestServer_workerKeyTLS: keys over TLS with client certificates. A
// worker with a certificate and its key connects; with keys on, a
// certificate alone is not enough (it identifies no worker).
func TestServer_workerKeyTLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	keyFile := filepath.Join(t.TempDir(), "alice.nkey")
	pub, err := WriteWorkerKey(keyFile, "alice")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, ServerOptions{Listen: "127.0.0.1:0", TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, TLSCA: pki.CA,
		Workers: []WorkerKey{{Name: "alice", PublicKey: pub}}})
	coord := connectTo(t, srv, "coordinator")
	if err := coord.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
		t.Fatal(err)
	}
	o := Options{URL: srv.ClientURL(), TLSCert: pki.ClientCert, TLSKey: pki.ClientKey, TLSCA: pki.CA}
	if c, err := Connect(testCtx(t, 10*time.Second), o); !errors.Is(err, ErrAuth) {
		if c != nil {
			c.Close()
		}
		t.Errorf("a client certificate without a key: %v, want ErrAuth", err)
	}
	o.NKey = keyFile
	c, err := Connect(testCtx(t, 10*time.Second), o)
	if err != nil {
		t.Fatalf("certificate and key: %v", err)
	}
	defer c.Close()
	if _, err := c.Tasks(testCtx(t, 10*time.Second)); err != nil {
		t.Errorf("Tasks over TLS with a key: %v", err)
	}
}

// TestServer_workerAckLimit shows a limit of the permissions: the ack
// subjects of the task consumer cannot be bound to the connection a task
// was delivered to, so a worker that guesses another delivery's ack
// subject acks it, and the task leaves the stream unanswered. (The
// coordinator publishes again tasks that are neither in the stream nor
// answered: TestRun_tasksPurged.)
func TestServer_workerAckLimit(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice", "bob"})
	publishTasks(t, k.coord, testTask(t, "job1", 1, 2))
	bob, err := k.connectWorker(t, "bob")
	if err != nil {
		t.Fatal(err)
	}
	m := nextTask(t, taskSource(t, bob))
	nc, _ := rawConn(t, k.srv.ClientURL(), k.keys["alice"], "alice")
	// $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>:
	// the first delivery of the consumer, at the task's stream sequence.
	ack := fmt.Sprintf("$JS.ACK.%s.%s.1.%d.1.0.0", TaskStream, LaneConsumer(0), m.Seq)
	if err := nc.Publish(ack, []byte("+ACK")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the task acked by another worker", func() bool { return streamMsgs(t, k.coord, TaskStream) == 0 })
}

// TestReadKey_roles: a key file says whose it is, a worker's or an
// observer's; files written before observers existed say "worker".
func TestReadKey_roles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		role Role
	}{{"lab-1", RoleWorker}, {"ops", RoleObserver}} {
		path := filepath.Join(dir, c.name+".nkey")
		pub, err := WriteKey(path, c.name, c.role)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ReadKey(path)
		if err != nil || k != (WorkerKey{Name: c.name, PublicKey: pub, Role: c.role}) {
			t.Errorf("ReadKey(%s's file) = %+v, %v; want %s %s %s", c.name, k, err, c.role, c.name, pub)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "ops.nkey"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "# observer: ops\n") || strings.Contains(string(data), "# worker:") {
		t.Errorf("observer's key file:\n%s", data)
	}
	// Both lines: whose is it?
	both := filepath.Join(dir, "both.nkey")
	if err := os.WriteFile(both, append([]byte("# worker: lab-1\n"), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := ReadKey(both); !errors.Is(err, ErrKeyFile) {
		t.Errorf("ReadKey(a file naming a worker and an observer) = %+v, %v; want ErrKeyFile", k, err)
	}
	if _, err := WriteKey(filepath.Join(dir, "x.nkey"), "x", "coordinator"); err == nil {
		t.Error("WriteKey with role coordinator succeeded")
	}
}
