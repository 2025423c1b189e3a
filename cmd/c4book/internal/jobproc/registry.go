package jobproc

import (
	"context"
	"log/slog"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// DefaultRegistryPoll is how often a job looks for the registry requests
// left in its book (see book.RequestDir) when Options.RegistryPoll is 0.
const DefaultRegistryPoll = 2 * time.Second

// WorkerKeys returns the keys of the active workers and observers of bk,
// each with its role, for the server: those of book.Book.ActiveWorkers,
// without the workers quarantined in the jobs of the given ids. It is
// never nil: an empty list still turns keys on (queue.ServerOptions).
func WorkerKeys(bk *book.Book, jobs ...string) ([]queue.WorkerKey, error) {
	ws, err := bk.ActiveWorkers(jobs...)
	if err != nil {
		return nil, err
	}
	keys := []queue.WorkerKey{}
	for _, w := range ws {
		keys = append(keys, queue.WorkerKey{Name: w.Name, PublicKey: w.PublicKey, Role: queue.Role(w.Role)})
	}
	return keys, nil
}

// followRegistry applies the registry requests left for the job, every
// poll until ctx is done. After a change, and before the command that
// asked for it hears back, it gives the server the active workers and
// observers, so that the command returns once an added key is accepted
// and a removed one refused, and snap takes a snapshot of the book:
// readers of the book (c4book worker list) read its snapshots while the
// job holds it, and would otherwise miss the change until the next one.
func followRegistry(ctx context.Context, bk *book.Book, job string, srv *queue.Server, snap *book.Snapshotter, poll time.Duration, log *slog.Logger) {
	changed := func() {
		keys, err := WorkerKeys(bk, job)
		if err == nil {
			err = srv.SetWorkers(keys)
		}
		if err != nil {
			log.Error("worker registry: the server keeps its former workers", "error", err)
		}
		snap.Take()
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		bk.ApplyRequests(log, changed)
	}
}
