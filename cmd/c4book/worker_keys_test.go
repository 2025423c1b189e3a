package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

func TestWorkerAdd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	key := filepath.Join(dir, "lab-1.nkey")
	r := run(t, "", "worker", "add", "lab-1", "--book", bookPath, "--out", key, "--width=5", "--height=4")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "worker lab-1 (number 1) registered in "+bookPath) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	before, _ := os.ReadFile(key)
	// The same file again: refused, and the file is untouched.
	wantErr(t, run(t, "", "worker", "add", "lab-2", "--book", bookPath, "--out", key), "file exists")
	if after, _ := os.ReadFile(key); string(after) != string(before) {
		t.Error("a refused add changed the key file")
	}
	// The same name again, or a name that is not a subject token.
	wantErr(t, run(t, "", "worker", "add", "lab-1", "--book", bookPath, "--out", filepath.Join(dir, "other.nkey")), "already registered")
	if _, err := os.Stat(filepath.Join(dir, "other.nkey")); !os.IsNotExist(err) {
		t.Errorf("a refused registration left its key file: %v", err)
	}
	wantErr(t, run(t, "", "worker", "add", "lab.1", "--book", bookPath), "not a letter")

	r = run(t, "", "worker", "list", "--book", bookPath)
	wantOK(t, r)
	if lines := outputLines(r.stdout); len(lines) != 2 || !strings.Contains(lines[1], "lab-1  worker  active") {
		t.Errorf("worker list:\n%s", r.stdout)
	}
	wantOK(t, run(t, "", "worker", "add", "lab-2", "--book", bookPath, "--out", filepath.Join(dir, "lab-2.nkey")))
	r = run(t, "", "worker", "conf", "--book", bookPath)
	wantOK(t, r)
	if strings.Count(r.stdout, "{nkey: U") != 2 || !strings.Contains(r.stdout, `"c4book.results.*.lab-2"`) || !strings.Contains(r.stdout, "$C4BOOK_NATS_PASSWORD") {
		t.Errorf("worker conf:\n%s", r.stdout)
	}
	wantOK(t, run(t, "", "worker", "remove", "lab-2", "--book", bookPath))
	conf := filepath.Join(dir, "c4book-workers.conf")
	wantOK(t, run(t, "", "worker", "conf", "--book", bookPath, "--out", conf))
	if data, err := os.ReadFile(conf); err != nil || strings.Contains(string(data), "lab-2") || !strings.Contains(string(data), "lab-1") {
		t.Errorf("worker conf --out after removing lab-2 (%v):\n%s", err, data)
	}
	wantOK(t, run(t, "", "worker", "remove", "lab-1", "--book", bookPath))
	wantErr(t, run(t, "", "worker", "remove", "lab-1", "--book", bookPath), "no such worker")
	r = run(t, "", "worker", "list", "--book", bookPath)
	if !strings.Contains(r.stdout, "lab-1  worker  removed ") {
		t.Errorf("worker list after remove:\n%s", r.stdout)
	}
}

// TestWorkerAdd_observer: an observer's key is registered, listed,
// written into the external server's users and removed as a worker's,
// with its role.
func TestWorkerAdd_observer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	key := filepath.Join(dir, "ops.nkey")
	wantOK(t, run(t, "", "worker", "add", "lab-1", "--book", bookPath, "--out", filepath.Join(dir, "lab-1.nkey"), "--width=5", "--height=4"))
	r := run(t, "", "worker", "add", "ops", "--observer", "--book", bookPath, "--out", key)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "observer ops (number 2) registered in "+bookPath) || !strings.Contains(r.stdout, "c4book status --nats URL --nkey ops.nkey") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if k, err := queue.ReadKey(key); err != nil || k.Role != queue.RoleObserver || k.Name != "ops" {
		t.Errorf("key file: %+v, %v; want observer ops's", k, err)
	}
	// The names are the workers' names.
	wantErr(t, run(t, "", "worker", "add", "ops", "--book", bookPath, "--out", filepath.Join(dir, "w.nkey")), "already registered")
	wantErr(t, run(t, "", "worker", "add", "lab-1", "--observer", "--book", bookPath, "--out", filepath.Join(dir, "o.nkey")), "already registered")

	r = run(t, "", "worker", "list", "--book", bookPath)
	wantOK(t, r)
	if lines := outputLines(r.stdout); len(lines) != 3 || !fieldsStartWith(lines[0], []string{"NUMBER", "NAME", "ROLE", "STATE"}) ||
		!fieldsStartWith(lines[1], []string{"1", "lab-1", "worker", "active"}) || !fieldsStartWith(lines[2], []string{"2", "ops", "observer", "active"}) {
		t.Errorf("worker list:\n%s", r.stdout)
	}
	r = run(t, "", "worker", "conf", "--book", bookPath)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "# observer ops\n") || !strings.Contains(r.stdout, `"$JS.API.DIRECT.GET.KV_c4book-status.$KV.c4book-status.>"`) ||
		!strings.Contains(r.stdout, `"_INBOX_c4book.ops.>"`) || strings.Count(r.stdout, "c4book.results.") != 1 {
		t.Errorf("worker conf: want the observer with its permissions, the worker alone with results:\n%s", r.stdout)
	}
	r = run(t, "", "worker", "remove", "ops", "--book", bookPath)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "observer ops (number 2) removed") {
		t.Errorf("remove:\n%s", r.stdout)
	}
	if r = run(t, "", "worker", "conf", "--book", bookPath); strings.Contains(r.stdout, "ops") {
		t.Errorf("worker conf after removing ops:\n%s", r.stdout)
	}
	// The two packages spell the roles alike: the registry's role is
	// handed to the server as it is.
	if queue.Role(book.RoleObserver) != queue.RoleObserver || queue.Role(book.RoleWorker) != queue.RoleWorker {
		t.Errorf("roles: book %q, %q; queue %q, %q", book.RoleWorker, book.RoleObserver, queue.RoleWorker, queue.RoleObserver)
	}
}

// TestCoordinator_workerKeys: a coordinator listening with registered
// workers and no other credentials. While the job runs, a worker is added
// and another removed through the book's request directory; the added one
// joins with its new key, the removed one is refused, and the job
// completes with the others.
func TestCoordinator_workerKeys(t *testing.T) {
	// Not parallel: it sets registryPoll, which the parallel tests read.
	defer func(d time.Duration) { registryPoll = d }(registryPoll)
	registryPoll = 100 * time.Millisecond
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	keyOf := func(name string) string { return filepath.Join(dir, name+".nkey") }
	for _, name := range []string{"lab-1", "lab-2"} {
		wantOK(t, run(t, "", "worker", "add", name, "--book", bookPath, "--out", keyOf(name), "--width=5", "--height=4"))
	}
	coord := startCommand(t, jobArgs("coordinator", bookPath, "--listen=127.0.0.1:0")...)
	line := coord.stdout.waitLine(t, "workers connect to ", coord.done)
	url := line[strings.LastIndex(line, " ")+1:]
	cmdLine := coord.stdout.waitLine(t, "c4book worker --nats", coord.done)
	if !strings.Contains(cmdLine, "C4BOOK_NATS_NKEY=") {
		t.Errorf("worker command line %q does not name the key file", cmdLine)
	}

	// While the job runs, its book is held: the changes go through it.
	r := run(t, "", "worker", "add", "lab-3", "--book", bookPath, "--out", keyOf("lab-3"))
	wantOK(t, r)
	if !strings.Contains(r.stderr, "held by a running job") || !strings.Contains(r.stdout, "worker lab-3 (number 3) registered") {
		t.Errorf("add while the job runs:\n%s\n%s", r.stdout, r.stderr)
	}
	wantOK(t, run(t, "", "worker", "remove", "lab-2", "--book", bookPath))
	wantErr(t, run(t, "", "worker", "remove", "lab-2", "--book", bookPath), "no such worker")
	// The list, read from the job's snapshot, has both changes at once,
	// not after the next book.snapshot-interval (1m).
	r = run(t, "", "worker", "list", "--book", bookPath)
	wantOK(t, r)
	if !strings.Contains(r.stderr, "reading its snapshot") || !strings.Contains(r.stdout, "lab-3  worker  active") || !strings.Contains(r.stdout, "lab-2  worker  removed") {
		t.Errorf("worker list while the job runs:\n%s\n%s", r.stdout, r.stderr)
	}

	// lab-2 is refused at once; no token gets in either.
	r = run(t, "", workerArgs(url, "", "--nkey", keyOf("lab-2"))...)
	wantErr(t, r, "refused the key of nats.nkey")
	r = run(t, "", workerArgs(url, "w9")...)
	wantErr(t, r, "needs credentials")

	w1 := startCommand(t, workerArgs(url, "", "--nkey", keyOf("lab-1"))...)
	w3 := startCommand(t, workerArgs(url, "", "--nkey", keyOf("lab-3"))...)
	r = coord.wait()
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Job 5x4-d10 complete") || strings.Contains(r.stdout, "lab-2") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "    lab-1 ") && !strings.Contains(r.stdout, "    lab-3 ") {
		t.Errorf("the summary names neither lab-1 nor lab-3:\n%s", r.stdout)
	}
	w1.stop()
	w3.stop()
	checkGeneratedBook(t, bookPath, solver.MustBoard(5, 4), "", 10, 1000)
}

// TestWorkerRemove_noJob: a book held by a process that does not apply
// requests (a plain generate) is refused at once, saying so; one held by a
// job that applies them but does not answer in time: the command
// withdraws its request and says that nothing changed.
func TestWorkerRemove_noJob(t *testing.T) {
	// Not parallel: it sets requestWait, which the parallel tests read.
	defer func(d time.Duration) { requestWait = d }(requestWait)
	requestWait = 300 * time.Millisecond
	dir := t.TempDir()
	bookPath := filepath.Join(dir, "5x4.db")
	wantOK(t, run(t, "", "worker", "add", "lab-1", "--book", bookPath, "--out", filepath.Join(dir, "lab-1.nkey")))
	bk, err := book.Open(bookPath, nil) // held for writing, by a process without a job
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	start := time.Now()
	wantErr(t, run(t, "", "worker", "remove", "lab-1", "--book", bookPath), "takes no changes of its workers", "without --listen")
	if took := time.Since(start); took >= requestWait {
		t.Errorf("refused after %v: it waited for an answer", took)
	}
	unmark, err := book.FollowRequests(bookPath) // says it applies them, and does not
	if err != nil {
		t.Fatal(err)
	}
	defer unmark()
	wantErr(t, run(t, "", "worker", "remove", "lab-1", "--book", bookPath), "did not apply the change", "nothing changed")
	if left, _ := filepath.Glob(filepath.Join(bookPath, book.RequestDir, "*.*")); len(left) != 0 {
		t.Errorf("requests left: %v", left)
	}
	if w, ok, err := bk.Worker("lab-1"); err != nil || !ok || !w.Active() {
		t.Errorf("lab-1 = %+v, %v, %v; want still active", w, ok, err)
	}
}
