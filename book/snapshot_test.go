package book

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// entryKey names an entry in a set of entries.
type entryKey struct {
	depth int
	key   uint64
}

// readEntries returns every position entry of bk.
func readEntries(tb testing.TB, bk *Book) map[entryKey]Value {
	tb.Helper()
	m := map[entryKey]Value{}
	for e, err := range bk.Entries(0, maxDepth) {
		if err != nil {
			tb.Fatal(err)
		}
		m[entryKey{e.Depth, e.Key}] = e.Value
	}
	return m
}

// wantEntries checks that bk holds exactly entries.
func wantEntries(tb testing.TB, bk *Book, entries []Entry) {
	tb.Helper()
	got := readEntries(tb, bk)
	if len(got) != len(entries) {
		tb.Errorf("%d entries, want %d", len(got), len(entries))
	}
	for _, e := range entries {
		if v, ok := got[entryKey{e.Depth, e.Key}]; !ok || v != e.Value {
			tb.Errorf("%v: got %v (present %v)", e, v, ok)
			return
		}
	}
}

// snapshotNames returns the names of the whole snapshots of the book at
// path, oldest first.
func snapshotNames(tb testing.TB, path string) []string {
	tb.Helper()
	snaps, err := listSnapshots(path)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, s := range snaps {
		names = append(names, s.name)
	}
	return names
}

// takeSnapshot takes a snapshot of bk and returns its time.
func takeSnapshot(tb testing.TB, bk *Book) time.Time {
	tb.Helper()
	t, err := bk.Snapshot()
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// openReadOnly opens the book at path read-only, closed when the test
// ends.
func openReadOnly(tb testing.TB, path string) *Book {
	tb.Helper()
	return openBook(tb, path, &Options{ReadOnly: true, CacheBytes: 1 << 20})
}

func TestBook_Snapshot(t *testing.T) {
	t.Parallel()
	all := solvedEntries(t, board4x4, 6)
	first, second := all[:len(all)/2], all[len(all)/2:]
	path := filepath.Join(t.TempDir(), "book")
	w := openBook(t, path, testOptions(board4x4))
	putAll(t, w, first)
	t1 := takeSnapshot(t, w)
	putAll(t, w, second)

	// The reader in this process: the writer's lock conflicts with its
	// own (lock_linux.go), as a writer in another process would.
	r1 := openReadOnly(t, path)
	if got, ok := r1.SnapshotTime(); !ok || !got.Equal(t1) {
		t.Fatalf("SnapshotTime = %v, %v; want %v, true", got, ok, t1)
	}
	t.Run("every entry before the snapshot, none after", func(t *testing.T) {
		wantEntries(t, r1, first)
	})
	t.Run("read-only", func(t *testing.T) {
		if err := r1.PutBatch(second[:1]); !errors.Is(err, ErrReadOnly) {
			t.Errorf("PutBatch on a snapshot: %v, want ErrReadOnly", err)
		}
	})
	if stale, err := r1.SnapshotStale(); err != nil || stale {
		t.Errorf("SnapshotStale with no newer snapshot = %v, %v", stale, err)
	}

	t2 := takeSnapshot(t, w)
	t.Run("a newer snapshot is seen", func(t *testing.T) {
		newest, ok, err := NewestSnapshot(path)
		if err != nil || !ok || !newest.Equal(t2) || !t2.After(t1) {
			t.Errorf("NewestSnapshot = %v, %v, %v; want %v after %v", newest, ok, err, t2, t1)
		}
		if stale, err := r1.SnapshotStale(); err != nil || !stale {
			t.Errorf("SnapshotStale = %v, %v; want true", stale, err)
		}
		r2 := openReadOnly(t, path)
		wantEntries(t, r2, all)
		r2.Close()
	})

	t.Run("a snapshot a reader holds is kept", func(t *testing.T) {
		takeSnapshot(t, w)
		t4 := takeSnapshot(t, w)
		names := snapshotNames(t, path)
		if len(names) != 3 || names[0] != t1.Format(snapshotTimeLayout) {
			t.Fatalf("snapshots %v: want the held one of %v and the newest two", names, t1)
		}
		wantEntries(t, r1, first) // still readable
		r1.Close()
		t5 := takeSnapshot(t, w)
		names = snapshotNames(t, path)
		if want := []string{t4.Format(snapshotTimeLayout), t5.Format(snapshotTimeLayout)}; len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
			t.Errorf("snapshots %v, want %v", names, want)
		}
	})

	t.Run("Close removes the snapshots but those held", func(t *testing.T) {
		r := openReadOnly(t, path)
		held, _ := r.SnapshotTime()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if names := snapshotNames(t, path); len(names) != 1 || names[0] != held.Format(snapshotTimeLayout) {
			t.Errorf("snapshots after Close: %v, want only the held one of %v", names, held)
		}
		if stale, err := r.SnapshotStale(); err != nil || !stale {
			t.Errorf("SnapshotStale after the writer's Close = %v, %v; want true", stale, err)
		}
		live := openReadOnly(t, path)
		if _, ok := live.SnapshotTime(); ok {
			t.Error("the book closed by its writer was read from a snapshot")
		}
		wantEntries(t, live, all)
		live.Close()
		r.Close()

		// The next writer removes the held one when it closes.
		openBook(t, path, nil).Close()
		if _, err := os.Stat(snapshotsDir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("snapshots directory after a writer's Close with no reader: %v", err)
		}
	})
}

func TestOpen_noSnapshot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "book")
	openBook(t, path, testOptions(board4x4))
	// A snapshot being taken when the writer crashed is no snapshot.
	if err := os.MkdirAll(filepath.Join(snapshotsDir(path), tmpSnapshotPrefix+"20250101T000000.000000000Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, &Options{ReadOnly: true})
	if !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("read-only Open of a book being written, without a snapshot: %v, want ErrNoSnapshot", err)
	}
	t.Log(err)
	_, err = Open(path, nil)
	if err == nil || !isLocked(err) {
		t.Errorf("writable Open of a book being written: %v, want the lock error", err)
	}
}

// TestOpen_snapshotLeftovers checks that a writable Open removes what a
// crash left of snapshots being taken or removed, and keeps the whole
// ones.
func TestOpen_snapshotLeftovers(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "book")
	w := openBook(t, path, testOptions(board4x4))
	putAll(t, w, solvedEntries(t, board4x4, 4))
	t1 := takeSnapshot(t, w)
	dir := snapshotsDir(path)
	// What a crash leaves: the writer dies without Close.
	leftovers := []string{tmpSnapshotPrefix + "20990101T000000.000000000Z", oldSnapshotPrefix + "20000101T000000.000000000Z"}
	for _, name := range leftovers {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "000001.sst"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.db.Close() // as a crash: the lock is released, nothing removed
	w.closed.Store(true)
	writing.remove(path)

	openBook(t, path, nil) // writable: it removes the leftovers
	for _, name := range leftovers {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a writable Open: %v", name, err)
		}
	}
	if names := snapshotNames(t, path); len(names) != 1 || names[0] != t1.Format(snapshotTimeLayout) {
		t.Errorf("whole snapshots after a writable Open: %v, want the one of %v", names, t1)
	}
	r := openReadOnly(t, path)
	if got, ok := r.SnapshotTime(); !ok || !got.Equal(t1) {
		t.Errorf("a reader of the restarted writer's book reads %v, %v; want the snapshot left from before, %v", got, ok, t1)
	}
}

// TestBook_SnapshotEvery takes snapshots every few milliseconds while
// batches are written: each snapshot holds a prefix of the batches, each
// whole, and every batch committed before the snapshot's time.
func TestBook_SnapshotEvery(t *testing.T) {
	t.Parallel()
	all := solvedEntries(t, board4x4, 6)
	const batchLen = 50
	path := filepath.Join(t.TempDir(), "book")
	w := openBook(t, path, testOptions(board4x4))

	ctx, cancel := context.WithCancel(context.Background())
	var failures []error
	var wg sync.WaitGroup
	wg.Go(func() {
		w.SnapshotEvery(ctx, 2*time.Millisecond, func(_ time.Time, _ time.Duration, err error) {
			if err != nil {
				failures = append(failures, err)
			}
		})
	})
	for {
		if _, ok, _ := NewestSnapshot(path); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var committed []time.Time // when each batch's PutBatch returned
	var opened []*Book
	for i := 0; i*batchLen < len(all); i++ {
		putAll(t, w, all[i*batchLen:min((i+1)*batchLen, len(all))])
		committed = append(committed, time.Now())
		if i%4 == 3 {
			if r, err := Open(path, &Options{ReadOnly: true, CacheBytes: 1 << 20}); err == nil {
				opened = append(opened, r)
			} else if !errors.Is(err, ErrNoSnapshot) {
				t.Fatal(err)
			}
		}
	}
	cancel()
	wg.Wait()
	for _, err := range failures {
		t.Errorf("snapshot failed: %v", err)
	}
	t.Logf("%d batches, %d snapshots read", len(committed), len(opened))
	if len(opened) == 0 {
		t.Fatal("no snapshot was opened")
	}
	for _, r := range opened {
		at, _ := r.SnapshotTime()
		got := readEntries(t, r)
		n := 0 // batches held
		for n*batchLen < len(all) {
			if _, ok := got[entryKey{all[n*batchLen].Depth, all[n*batchLen].Key}]; !ok {
				break
			}
			n++
		}
		want := all[:min(n*batchLen, len(all))]
		if len(got) != len(want) {
			t.Errorf("snapshot of %v: %d entries, want the %d of its first %d batches", at, len(got), len(want), n)
		}
		for i, c := range committed {
			if c.Before(at) && i >= n {
				t.Errorf("snapshot of %v: batch %d committed at %v is missing", at, i, c)
			}
		}
		r.Close()
	}
	// Those the readers held go with the next snapshot.
	takeSnapshot(t, w)
	if names := snapshotNames(t, path); len(names) != keepSnapshots {
		t.Errorf("snapshots with no reader: %v, want %d", names, keepSnapshots)
	}
}

// writerEnv names the book a helper process of TestSnapshot_otherProcess
// writes.
const writerEnv = "C4BOOK_TEST_SNAPSHOT_WRITER"

// TestSnapshot_otherProcess reads the snapshot of a book that another
// process writes, and sees that process close it.
func TestSnapshot_otherProcess(t *testing.T) {
	t.Parallel()
	entries := solvedEntries(t, board4x4, 4)
	if path := os.Getenv(writerEnv); path != "" {
		writerProcess(t, path, entries)
		return
	}
	path := filepath.Join(t.TempDir(), "book")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSnapshot_otherProcess$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the writer process: %v", err)
	}
	taken, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the writer process said %q: %v", line, err)
	}

	r := openReadOnly(t, path)
	if got, ok := r.SnapshotTime(); !ok || !got.Equal(taken) {
		t.Fatalf("SnapshotTime = %v, %v; want the writer's %v", got, ok, taken)
	}
	wantEntries(t, r, entries[:len(entries)/2])
	if stale, err := r.SnapshotStale(); err != nil || stale {
		t.Errorf("SnapshotStale while the writer runs = %v, %v", stale, err)
	}

	stdin.Close() // the writer closes the book and exits
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the writer process: %v", err)
	}
	if stale, err := r.SnapshotStale(); err != nil || !stale {
		t.Errorf("SnapshotStale once the writer closed the book = %v, %v; want true", stale, err)
	}
	live := openReadOnly(t, path)
	if _, ok := live.SnapshotTime(); ok {
		t.Error("the book its writer closed was read from a snapshot")
	}
	wantEntries(t, live, entries)
}

// writerProcess is the writer of TestSnapshot_otherProcess: it writes half
// of entries, takes a snapshot and prints its time, writes the other half
// and closes the book when its standard input ends.
func writerProcess(t *testing.T, path string, entries []Entry) {
	w, err := Open(path, testOptions(board4x4))
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, w, entries[:len(entries)/2])
	fmt.Println(takeSnapshot(t, w).Format(time.RFC3339Nano))
	putAll(t, w, entries[len(entries)/2:])
	io.Copy(io.Discard, os.Stdin)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
