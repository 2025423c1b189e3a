package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Pulling. A pull consumer hands a client what it asks for, and the ack
// timer of a message starts when the server delivers it, not when the
// client starts on it. So sources ask for one message at a time, right when
// the caller wants it, and each request waits at most pullWait before it is
// renewed.
//
// A message the server sends to a request nobody waits for any more is
// lost to the client, and delivered again only after the AckWait, a
// delivery counted toward MaxDeliver. So a request is never left at the end
// of its wait: the server ends it (its expiry is the wait), and the client
// waits for that end, when every message sent before it has come. Only a
// cancelled context or a closed connection leaves a request before its
// end. (nats.go's FetchContext gives the server 90% of the context's time
// and leaves at the deadline: on a loaded machine a message sent in the
// last tenth was lost now and then, TestPullWithin_losesNothing.)
const (
	// pullWait is how long one pull request waits for a message.
	pullWait = 5 * time.Second
	// minPullWait is the shortest pull request worth sending.
	minPullWait = 20 * time.Millisecond
	// pullRetryDelay is the pause after a pull failed for a passing reason
	// (disconnected, no responders), so that a source does not spin.
	pullRetryDelay = 500 * time.Millisecond
)

// pullWithin waits up to wait for one message of cons, nil if none came;
// a wait of 0 takes only a message waiting already. A wait of at least
// minPullWait is one pull request; failures are as for pullOne, but for
// the end of the wait.
func (c *Conn) pullWithin(ctx context.Context, cons jetstream.Consumer, what string, wait time.Duration) (jetstream.Msg, error) {
	if wait < minPullWait {
		batch, err := cons.FetchNoWait(1)
		if err == nil {
			for m := range batch.Messages() {
				return m, nil
			}
			err = batch.Error()
		}
		if err == nil || errors.Is(err, jetstream.ErrNoMessages) {
			return nil, nil
		}
		if err := c.pullError(ctx, err, what); err != nil {
			return nil, err
		}
		// A passing failure: pause, so that a caller does not spin.
		return nil, sleep(ctx, pullRetryDelay)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	m, err := c.pullOne(wctx, cons, what)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return nil, nil // the wait is over
	}
	return m, err
}

// pullError returns err, the failure of a pull for what under ctx, as
// pullOne returns it; nil for a failure that is part of waiting.
func (c *Conn) pullError(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if c.closed.Err() != nil {
		return fmt.Errorf("queue: %s: %w", what, ErrClosed)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, jetstream.ErrNoHeartbeat), errors.Is(err, jetstream.ErrNoMessages):
		return nil
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining):
		return fmt.Errorf("queue: %s: %w", what, ErrClosed)
	case errors.Is(err, jetstream.ErrConsumerNotFound), errors.Is(err, jetstream.ErrConsumerDeleted),
		errors.Is(err, jetstream.ErrStreamNotFound):
		return c.notReady(what, err)
	case transient(err):
		return nil
	}
	return fmt.Errorf("queue: %s: %w", what, err)
}

// pullOne waits for one message of cons until ctx is done. Timeouts and
// missing heartbeats are part of waiting; disconnections are waited out.
// It returns ctx's error when ctx is done, an error wrapping ErrClosed as
// soon as the connection is closed, and an error wrapping ErrNotReady when
// the consumer is gone. A message that comes as ctx's deadline passes is
// returned: the last request is waited for to its end (see Pulling).
func (c *Conn) pullOne(ctx context.Context, cons jetstream.Consumer, what string) (jetstream.Msg, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait := pullWait
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait < minPullWait {
			// Too short for a pull request: wait out ctx instead.
			<-ctx.Done()
			return nil, ctx.Err()
		}
		m, err := c.pullRequest(ctx, cons, wait)
		if m != nil {
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.closed.Err() != nil {
			return nil, fmt.Errorf("queue: %s: %w", what, ErrClosed)
		}
		switch {
		case err == nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout),
			errors.Is(err, jetstream.ErrNoHeartbeat), errors.Is(err, jetstream.ErrNoMessages):
			// Nothing yet: ask again.
		case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining):
			return nil, fmt.Errorf("queue: %s: %w", what, ErrClosed)
		case errors.Is(err, jetstream.ErrConsumerNotFound), errors.Is(err, jetstream.ErrConsumerDeleted),
			errors.Is(err, jetstream.ErrStreamNotFound):
			return nil, c.notReady(what, err)
		case transient(err):
			if err := sleep(ctx, pullRetryDelay); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("queue: %s: %w", what, err)
		}
	}
}

// pullRequest sends one pull request for a message of cons, which the
// server ends after wait, and waits for it: the message, or nil and nil
// when the wait ended with none. ctx's deadline does not end the wait
// (the server ends it then); a cancelled ctx or a closed connection does,
// and a message the server sends after that comes again after the AckWait.
func (c *Conn) pullRequest(ctx context.Context, cons jetstream.Consumer, wait time.Duration) (jetstream.Msg, error) {
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(wait))
	if err != nil {
		return nil, err
	}
	done := ctx.Done()
	for {
		select {
		case m := <-batch.Messages():
			if m != nil {
				return m, nil
			}
			return nil, batch.Error()
		case <-done:
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, ctx.Err()
			}
			done = nil // the deadline: the server ends the request about now
		case <-c.closed.Done():
			return nil, nats.ErrConnectionClosed
		}
	}
}

// Transient reports whether a request of this package that failed with
// err may succeed if made again unchanged: the connection is being
// re-established, the server (or its JetStream) is not answering yet or
// not there yet (ErrUnreachable), or the streams are not set up yet
// (ErrNotReady). A caller whose own context is still live retries such an
// error after a pause (Backoff.Retry).
func Transient(err error) bool {
	return errors.Is(err, ErrNotReady) || errors.Is(err, ErrUnreachable) || transient(err)
}

// transient reports whether a request that failed with err may succeed if
// sent again unchanged: the connection is being re-established, or the
// server (or its JetStream) is not answering yet, or shutting down (it
// ends the pull requests waiting then).
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrReconnectBufExceeded) ||
		errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) ||
		errors.Is(err, jetstream.ErrNoHeartbeat) ||
		errors.Is(err, jetstream.ErrConsumerLeadershipChanged) ||
		errors.Is(err, jetstream.ErrServerShutdown)
}

// sleep waits for d or until ctx is done, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Publishing with retries. A message id makes a publish idempotent, so a
// publish whose ack was lost is simply sent again.
const publishAttemptWait = 10 * time.Second // one attempt's wait for its ack

// publishBackoff paces the attempts of publish. Its lines are for
// debugging: the connection says itself that it is lost (Conn's logger).
var publishBackoff = Backoff{First: 250 * time.Millisecond, Max: 5 * time.Second, Level: slog.LevelDebug,
	Passing: func(err error) bool { return transient(err) || streamFull(err) }}

// jsStoreFailed is JetStream's error code for a message a stream did not
// store: among other reasons, one of its limits is reached.
const jsStoreFailed jetstream.ErrorCode = 10077

// streamFull reports whether err is a stream refusing a message for one of
// its limits (its bytes, its messages per subject): it stores it once the
// coordinator takes what waits, so the publish is tried again.
func streamFull(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jsStoreFailed {
		return false
	}
	return strings.Contains(apiErr.Description, "maximum messages per subject") || strings.Contains(apiErr.Description, "maximum bytes")
}

// publish publishes m with message id id, retrying passing failures until
// ctx is done. An attempt in flight when the connection is lost, whose ack
// will not come, is made again without waiting out publishAttemptWait
// (failOnLoss); the message id keeps the server from storing it twice.
func (c *Conn) publish(ctx context.Context, m *nats.Msg, id string) error {
	err := publishBackoff.Retry(ctx, c.log, "the server to store "+id, func() error {
		actx, cancel := context.WithTimeout(ctx, publishAttemptWait)
		defer cancel()
		actx, release := c.failOnLoss(actx)
		defer release()
		_, err := c.js.PublishMsg(actx, m, jetstream.WithMsgID(id))
		return lossErr(actx, err)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, nats.ErrConnectionClosed):
		return fmt.Errorf("queue: publish %s: %w", id, ErrClosed)
	case ctx.Err() != nil:
		return fmt.Errorf("queue: publish: %w", err) // names id already
	}
	return fmt.Errorf("queue: publish %s: %w", id, err)
}

// newMsg returns a message on subject carrying data, naming its sender.
func newMsg(subject, sender string, data []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set(senderHeader, sender)
	return m
}

// decodeError describes a message that did not decode.
func decodeError(m jetstream.Msg, err error) *DecodeError {
	d := &DecodeError{Subject: m.Subject(), Err: err}
	if h := m.Headers(); h != nil {
		d.Sender = h.Get(senderHeader)
	}
	if md, merr := m.Metadata(); merr == nil {
		d.Seq = md.Sequence.Stream
	}
	return d
}
