package queue

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap them, so callers
// test with errors.Is.
var (
	// ErrMalformed: a message, or a value to encode, breaks the format of
	// codec.go. Decoders return it for every input they reject.
	ErrMalformed = errors.New("malformed message")
	// ErrInvalidID: a job id or worker id that is not allowed (see
	// ValidJobID and ValidWorkerID).
	ErrInvalidID = errors.New("invalid id")
	// ErrInvalidOptions: options that cannot work (a missing store
	// directory, an address that is not HOST:PORT, an AckWait below a
	// second, ...).
	ErrInvalidOptions = errors.New("invalid options")
	// ErrNoAuth: an embedded server asked to listen on the network without
	// any authentication.
	ErrNoAuth = errors.New("server exposed without authentication")
	// ErrAuth: the server refused the connection's credentials.
	ErrAuth = errors.New("nats: authorization violation")
	// ErrUnreachable: Connect found no server to talk to at its address
	// (nothing listening, no route, a host name that does not resolve, a
	// server that hung up before it answered): one may be there later, so
	// it is Transient.
	ErrUnreachable = errors.New("no server answers")
	// ErrNotReady: the streams or consumers are not there yet (the
	// coordinator has not run EnsureStreams); retry later.
	ErrNotReady = errors.New("queue streams not set up")
	// ErrNotFound: no such task, job status or worker status.
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the server refused a request of the connection, for
	// its credentials lack the permission (a worker's key reading the
	// status of other workers, for instance).
	ErrForbidden = errors.New("refused by the server's permissions")
	// ErrClosed: the connection is closed.
	ErrClosed = errors.New("connection closed")
)

// DecodeError is a message that a source took off a stream but could not
// decode. The source has already terminated the message (it will not be
// delivered again); the error is for the log. It wraps ErrMalformed.
type DecodeError struct {
	Subject string // subject the message was published on
	Seq     uint64 // stream sequence of the message
	Sender  string // the publisher, as it named itself in a header; "" if unknown
	Err     error  // what is wrong; wraps ErrMalformed
}

func (e *DecodeError) Error() string {
	from := ""
	if e.Sender != "" {
		from = fmt.Sprintf(", from %q", e.Sender)
	}
	return fmt.Sprintf("queue: terminated message %d on %s%s: %v", e.Seq, e.Subject, from, e.Err)
}

// Unwrap returns the decoding error, which wraps ErrMalformed.
func (e *DecodeError) Unwrap() error { return e.Err }

// malformed returns an error wrapping ErrMalformed: "malformed message:
// task: 3 keys announced, 2 present".
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}
