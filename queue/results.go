package queue

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// PublishResult publishes r on the result stream, on the subject of its
// job and worker (WorkerResultSubject), with message id
// "<job>/<task>/<worker>", so that publishing it again within
// DuplicateWindow stores it once. Passing failures (a lost connection, a
// lost ack) are retried until ctx is done. An invalid result publishes
// nothing and the error wraps ErrMalformed.
func (c *Conn) PublishResult(ctx context.Context, r Result) error {
	data, err := r.MarshalBinary()
	if err != nil {
		return fmt.Errorf("queue: publish result: %w", err)
	}
	if _, err := c.stream(ctx, ResultStream); err != nil {
		return err
	}
	m := newMsg(WorkerResultSubject(r.JobID, r.WorkerID), r.WorkerID, data)
	if c.signer != nil {
		if err := sign(c.signer, m); err != nil {
			return err
		}
	}
	return c.publish(ctx, m, resultMsgID(r.JobID, r.TaskID, r.WorkerID))
}

// ResultSource hands the results of one job to the coordinator, from the
// job's durable consumer: results not acked before a crash come again after
// a restart.
type ResultSource struct {
	c     *Conn
	job   string
	cons  jetstream.Consumer
	stray []StrayResults
}

// Results makes the result stream store job's results (jobsubjects.go)
// and creates (or binds to) the durable consumer of job's results,
// "c4book-coord-<job>". The error wraps ErrNotReady when the result stream
// does not exist (EnsureStreams).
func (c *Conn) Results(ctx context.Context, job string) (*ResultSource, error) {
	if err := ValidJobID(job); err != nil {
		return nil, fmt.Errorf("queue: results: %w", err)
	}
	stray, err := c.openJobSubjects(ctx, job)
	if err != nil {
		return nil, err
	}
	cons, err := c.js.CreateOrUpdateConsumer(ctx, ResultStream, jetstream.ConsumerConfig{
		Durable:        ResultConsumer(job),
		Description:    "c4book: results of job " + job + " for the coordinator",
		FilterSubjects: []string{ResultSubject(job), ResultSubject(job) + ".*"},
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        resultAckWait,
		MaxDeliver:     -1,
		MaxAckPending:  resultMaxAckPending,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, c.notReady("create consumer "+ResultConsumer(job), err)
	}
	return &ResultSource{c: c, job: job, cons: cons, stray: stray}, nil
}

// Stray returns the results of jobs not open that the stream held and
// Results purged.
func (s *ResultSource) Stray() []StrayResults {
	if s == nil {
		return nil
	}
	return s.stray
}

// Next waits for the next result until ctx is done. A message that does
// not decode is terminated and returned as a *DecodeError (wrapping
// ErrMalformed); the source keeps working. Other errors: ctx's error,
// ErrClosed, ErrNotReady (the consumer was deleted).
func (s *ResultSource) Next(ctx context.Context) (*ResultMsg, error) {
	m, err := s.c.pullOne(ctx, s.cons, "next result of "+s.job)
	if err != nil {
		return nil, err
	}
	rm, derr := s.decode(m)
	if derr != nil {
		return nil, derr
	}
	return rm, nil
}

// Fetch waits until at least one result is there (or ctx is done), then
// returns up to max results without waiting further: the batch the
// coordinator writes at once. Messages that do not decode are terminated and
// returned in bad; they count toward max. err is ctx's error, ErrClosed or
// ErrNotReady, with no messages.
func (s *ResultSource) Fetch(ctx context.Context, max int) (msgs []*ResultMsg, bad []*DecodeError, err error) {
	if max < 1 {
		return nil, nil, fmt.Errorf("%w: fetch %d results", ErrInvalidOptions, max)
	}
	first, err := s.c.pullOne(ctx, s.cons, "fetch results of "+s.job)
	if err != nil {
		return nil, nil, err
	}
	add := func(m jetstream.Msg) {
		if rm, derr := s.decode(m); derr != nil {
			bad = append(bad, derr)
		} else {
			msgs = append(msgs, rm)
		}
	}
	add(first)
	if max > 1 {
		batch, err := s.cons.FetchNoWait(max - 1)
		if err == nil {
			for m := range batch.Messages() {
				add(m)
			}
		}
		// An error here leaves the rest for the next Fetch.
	}
	return msgs, bad, nil
}

// decode decodes m, terminating it if it does not decode.
func (s *ResultSource) decode(m jetstream.Msg) (*ResultMsg, *DecodeError) {
	rm := &ResultMsg{reply: jsReplier{c: s.c, m: m}, data: m.Data()}
	if h := m.Headers(); h != nil {
		rm.signature = h.Get(signatureHeader)
	}
	if md, err := m.Metadata(); err == nil {
		rm.Seq, rm.Delivered = md.Sequence.Stream, md.NumDelivered
	}
	err := rm.Result.UnmarshalBinary(m.Data())
	if err == nil {
		var ok bool
		if rm.Publisher, ok = subjectWorker(m.Subject(), rm.Result.JobID); !ok {
			err = malformed("result %s/%d published on %s, not on a subject of its job (%s)", rm.Result.JobID, rm.Result.TaskID, m.Subject(), WorkerResultSubject(rm.Result.JobID, rm.Result.WorkerID))
		}
	}
	if err != nil {
		derr := decodeError(m, err)
		if terr := m.TermWithReason(err.Error()); terr != nil {
			s.c.log.Warn("queue: could not terminate malformed result", "subject", m.Subject(), "seq", rm.Seq, "err", terr)
		}
		return nil, derr
	}
	return rm, nil
}

// ResultMsg is a result delivered to the coordinator. The coordinator
// checks and stores it, then acks it; a result it rejects it terminates.
// A result neither acked nor terminated comes again after two minutes.
type ResultMsg struct {
	Result    Result
	Seq       uint64 // stream sequence of the result
	Delivered uint64 // deliveries of this result, this one included
	// Publisher is the worker the result's subject names
	// (WorkerResultSubject), "" on the per-job subject of older workers.
	// The server lets a worker with a key publish on its own subject only,
	// so this, not Result.WorkerID, is who sent the result: a result whose
	// WorkerID differs from it is forged.
	Publisher string

	reply     Replier
	data      []byte // the message's data, which its signature covers
	signature string // the signature header, "" if none
}

// NewResultMsg returns a result message that no server delivered: its
// replies go to r. It is for fakes of a result source in tests of the
// coordinator.
func NewResultMsg(res Result, seq, delivered uint64, r Replier) *ResultMsg {
	return &ResultMsg{Result: res, Seq: seq, Delivered: delivered, reply: r}
}

// Ack tells the server that the result is stored, and waits for the server
// to confirm.
func (m *ResultMsg) Ack(ctx context.Context) error {
	if err := m.reply.Ack(ctx); err != nil {
		return fmt.Errorf("queue: ack %s: %w", m.id(), err)
	}
	return nil
}

// Term tells the server never to deliver the result again: the coordinator
// rejected it.
func (m *ResultMsg) Term() error {
	if err := m.reply.Term(); err != nil {
		return fmt.Errorf("queue: term %s: %w", m.id(), err)
	}
	return nil
}

// id names the result in errors: "<job>/<task>/<worker>".
func (m *ResultMsg) id() string {
	return resultMsgID(m.Result.JobID, m.Result.TaskID, m.Result.WorkerID)
}
