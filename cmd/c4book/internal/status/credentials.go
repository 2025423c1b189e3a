package status

import (
	"errors"
	"fmt"

	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
)

// credentials says which credentials may read the cluster's status, for
// the errors of c4book status.
const credentials = "use an observer's key (c4book worker add NAME --observer on the coordinator's machine, then --nkey FILE), " +
	"or the operator's nats.token, or nats.user and nats.password"

// CheckKey refuses a key file of nats.nkey that is not an observer's: a
// worker's key may not read the status, and the server would refuse it
// after the connection.
func CheckKey(n config.NATS) error {
	if n.NKey == "" {
		return nil
	}
	k, err := queue.ReadKey(n.NKey)
	if err != nil {
		return fmt.Errorf("nats.nkey: %w", err)
	}
	if k.Role != queue.RoleObserver { // a worker's: ReadKey knows no other role
		return fmt.Errorf("nats.nkey (%s) is worker %s's key, and a worker's key cannot read the cluster's status (it may only take tasks and publish its own results): %s",
			n.NKey, k.Name, credentials)
	}
	return nil
}

// ExplainError explains err, the failure of a status read from the server
// at url with the credentials given (jobproc.CredentialsSet): credentials
// the server does not let read the status.
func ExplainError(url, given string, err error) error {
	if errors.Is(err, queue.ErrForbidden) {
		return fmt.Errorf("the server at %s does not let these credentials read the cluster's status (%s): %s: %w",
			url, given, credentials, err)
	}
	return err
}
