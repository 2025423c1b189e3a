package status

import (
	"context"
	"errors"

	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/queue"
)

// Source is the part of a queue connection the status is read from.
// *queue.Conn is a Source.
type Source interface {
	// Workers returns the statuses of the workers seen lately.
	Workers(ctx context.Context) ([]queue.WorkerStatus, error)
	// Jobs returns the statuses of every job reported.
	Jobs(ctx context.Context) ([]queue.JobStatus, error)
	// JobStatus returns the status of job id, or an error wrapping
	// queue.ErrNotFound (none) or queue.ErrMalformed (junk on its key).
	JobStatus(ctx context.Context, id string) (queue.JobStatus, error)
	// Junk returns the status keys that hold no status (queue.Conn.Junk).
	Junk(ctx context.Context) ([]string, error)
}

var _ Source = (*queue.Conn)(nil)

// Worker is a worker's status with its rate, as status prints it.
type Worker struct {
	queue.WorkerStatus
	Rate float64 `json:"rate"` // positions solved per second from Started to Seen
}

// Report is the status of the cluster: what status prints, and the
// object of status --json.
type Report struct {
	Jobs    []queue.JobStatus `json:"jobs"`
	Missing []string          `json:"missing,omitempty"` // jobs asked for that have no status
	Workers []Worker          `json:"workers"`
	// Junk are the status keys ("job.<job>", "worker.<id>") whose latest
	// message is no status: a server's answer to a request some client
	// sent onto the key. Their jobs and workers are left out until they
	// put their statuses again.
	Junk []string `json:"junk,omitempty"`
}

// Read reads the statuses of the jobs named (all jobs if none is) and of
// the workers. A job named that has no status is listed in Missing; the
// keys holding junk are listed in Junk.
func Read(ctx context.Context, src Source, jobs []string) (Report, error) {
	rep := Report{Jobs: []queue.JobStatus{}, Workers: []Worker{}}
	ws, err := src.Workers(ctx)
	if err != nil {
		return rep, err
	}
	for _, w := range ws {
		rep.Workers = append(rep.Workers, Worker{WorkerStatus: w, Rate: workerRate(w)})
	}
	if len(jobs) == 0 {
		all, err := src.Jobs(ctx)
		if err != nil {
			return rep, err
		}
		rep.Jobs = append(rep.Jobs, all...)
	}
	for _, id := range jobs {
		s, err := src.JobStatus(ctx, id)
		switch {
		case errors.Is(err, queue.ErrNotFound):
			rep.Missing = append(rep.Missing, id)
			continue
		case errors.Is(err, queue.ErrMalformed):
			continue // in Junk
		case err != nil:
			return rep, err
		}
		rep.Jobs = append(rep.Jobs, s)
	}
	rep.Junk, err = src.Junk(ctx)
	return rep, err
}

// workerRate returns the positions a worker solved per second, from its
// start to its last report.
func workerRate(w queue.WorkerStatus) float64 {
	return progress.Rate(w.Solved, w.Seen.Sub(w.Started))
}
