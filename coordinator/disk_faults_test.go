package coordinator_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// shrinkingDisk is the operating system's file system, reporting avail
// bytes free.
type shrinkingDisk struct {
	vfs.FS
	avail *atomic.Uint64
}

func (d shrinkingDisk) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := d.FS.GetDiskUsage(path)
	u.AvailBytes = d.avail.Load()
	return u, err
}

// TestRun_diskFull: when the book's disk runs low, the coordinator stops
// writing and says so in the job status; the results wait in the queue;
// once space is freed the job completes, with every entry right.
func TestRun_diskFull(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	var avail atomic.Uint64
	avail.Store(1 << 40)
	bk, err := book.Open(filepath.Join(t.TempDir(), "small"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20, FS: shrinkingDisk{vfs.Default, &avail}})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := c.startWorker(t, ctx, "w")
	spec := coordinator.Spec{Board: b, Depth: 10, TaskSize: 8}
	var once sync.Once
	filled := make(chan struct{})
	cfg := coordinator.Config{Spec: spec, Book: bk, Queue: c.conn, Stream: c.stream, Log: logger(t), MinFreeBytes: 1 << 30,
		Progress: func(p coordinator.Progress) {
			if p.Phase == book.JobSolving && p.Total > 0 && p.Done >= p.Total/3 {
				once.Do(func() {
					avail.Store(1 << 20) // below MinFreeBytes
					close(filled)
				})
			}
		}}
	done := make(chan error, 1)
	var sum coordinator.Summary
	go func() {
		var err error
		sum, err = coordinator.Run(ctx, cfg)
		done <- err
	}()
	<-filled
	// The job waits, and says why.
	for {
		st, err := c.conn.JobStatus(ctx, spec.ID())
		if err == nil && st.Message == "waiting for disk space" && st.State == string(book.JobSolving) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended while the disk was full: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	avail.Store(1 << 40)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	wait()
	n := checkBook(t, b, bk, "", spec.Depth)
	if sum.Positions != int64(n) {
		t.Errorf("summary %+v for %d positions", sum, n)
	}
}
