package coordinator

import (
	"context"
	"slices"

	"github.com/c4book/c4book/queue"
)

// repairQueue sets up again the parts of the queue that a client with
// every right deleted (queue.Conn.RepairQueue), binds to the job's results
// again when their consumer went, and publishes again the tasks out when
// the task stream or the result stream went with them: their copies, or
// their answers, are lost.
func (j *job) repairQueue(ctx context.Context, results *Results) error {
	q := j.cfg.Queue
	missing, err := q.RepairQueue(ctx, j.cfg.Stream, j.id)
	if err != nil {
		if ctx.Err() == nil {
			j.log.Warn("looking for deleted parts of the queue", "error", err)
		}
		return nil // looked for again at the next status
	}
	if len(missing) == 0 {
		return nil
	}
	j.summary.Repaired = append(j.summary.Repaired, missing...)
	j.log.Warn("parts of the queue were deleted while the job ran (only the operator's credentials allow it): set up again", "parts", missing)
	if slices.Contains(missing, queue.PartResultStream) || slices.Contains(missing, queue.PartResultConsumer) {
		src, err := q.Results(ctx, j.id)
		if err != nil {
			return err
		}
		*results = src
	}
	if !slices.Contains(missing, queue.PartTaskStream) && !slices.Contains(missing, queue.PartResultStream) {
		return nil
	}
	out := j.dispatch.outstanding()
	j.dispatch.lost(out)
	j.log.Warn("tasks out when the queue was deleted: published again", "tasks", len(out))
	return j.dispatch.publishAgain(ctx, out)
}
