package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/c4book/c4book/queue"
)

// retry calls fn until it succeeds, returns an error that is not passing
// (see queue.Transient), or ctx is done: while the NATS server restarts or
// does not answer yet, the coordinator waits for it, with the backoff of
// every client of the queue (queue.Backoff), saying so at once and then
// once a minute.
func retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	err := queue.Backoff{First: time.Second, Level: slog.LevelWarn}.Retry(ctx, log, "the NATS server: "+what, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
