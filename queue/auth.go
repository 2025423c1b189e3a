package queue

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Worker identity. Each worker machine holds its own NATS nkey: an
// ed25519 key pair whose seed (the private half) stays in a file on that
// machine, and whose public key the coordinator's server knows. At
// connection time the server sends a nonce, the client signs it with the
// seed, and the server checks the signature with the public key: no secret
// travels and the server holds none. The server then grants that user the
// permissions of WorkerPermissions, which fix the one subject its results
// may be published on, c4book.results.<job>.<name>: the coordinator reads
// the worker's name from the subject, so the identity is the credential.
//
// A key file, written by WriteWorkerKey (mode 0600, never overwritten):
//
//	# c4book worker key: the NATS nkey seed of worker "lab-3". Keep it
//	# secret, on that machine only (mode 0600).
//	# worker: lab-3
//	# public key: UAB...
//	SUA...                         (the seed; nats.go reads it as is)
//
// The "worker:" line tells the worker its name, which its subjects carry.

// WorkerKey is a registered worker as the server knows it: a name and the
// public half of its nkey.
type WorkerKey struct {
	Name      string // ValidWorkerName
	PublicKey string // nkey user public key, "U..."
}

// workerInboxPrefix starts the reply subjects of a worker that connects
// with a key: "_INBOX_c4book.<name>", so that it may subscribe to its own
// replies only.
const workerInboxPrefix = "_INBOX_c4book."

// WorkerInbox returns the inbox prefix of worker name.
func WorkerInbox(name string) string { return workerInboxPrefix + name }

// ValidWorkerName returns nil if name can name a worker with a key: 1 to
// MaxJobIDLen bytes of ASCII letters, digits, '-' and '_', one subject
// token as it is (book.ValidWorkerName is the same rule).
func ValidWorkerName(name string) error {
	if err := ValidJobID(name); err != nil {
		return fmt.Errorf("%w: worker name %q: 1..%d letters, digits, '-' or '_'", ErrInvalidID, name, MaxJobIDLen)
	}
	return nil
}

// WorkerPermissions returns what the server lets worker name do, and
// nothing more: bind to the workers' task consumer and read its AckWait,
// pull tasks and answer them (ack, nak, in progress, term), publish
// results of any job on its own subject only, put and remove its own
// status, and receive the replies to its own requests. It may not
// create, purge or delete streams or consumers, read the result stream,
// read other workers' replies or publish as another worker.
func WorkerPermissions(name string) (publish, subscribe []string) {
	publish = []string{
		"$JS.API.CONSUMER.INFO." + TaskStream + "." + WorkerConsumer,     // Tasks, TaskSource.AckWait
		"$JS.API.CONSUMER.MSG.NEXT." + TaskStream + "." + WorkerConsumer, // TaskSource.Next
		"$JS.ACK." + TaskStream + "." + WorkerConsumer + ".>",            // TaskMsg replies
		"$JS.API.STREAM.INFO." + ResultStream,                            // PublishResult binds the stream
		resultSubjectPrefix + "*." + name,                                // PublishResult
		"$JS.API.STREAM.INFO.KV_" + StatusBucket,                         // the status bucket
		"$KV." + StatusBucket + "." + workerKey(name),                    // PutWorkerStatus, RemoveWorkerStatus
	}
	subscribe = []string{WorkerInbox(name) + ".>"}
	return publish, subscribe
}

// coordinatorKeyName names the coordinator's own key in the server's log.
const coordinatorKeyName = "coordinator"

// nkeyUsers returns the server's nkey users: each worker with its
// permissions, and the coordinator's public key with every right.
func nkeyUsers(workers []WorkerKey, coordinator string) []*server.NkeyUser {
	users := []*server.NkeyUser{{Nkey: coordinator}}
	for _, w := range workers {
		pub, sub := WorkerPermissions(w.Name)
		users = append(users, &server.NkeyUser{
			Nkey: w.PublicKey,
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: pub},
				Subscribe: &server.SubjectPermission{Allow: sub},
			},
		})
	}
	return users
}

// WriteWorkerKey makes a new nkey for worker name, writes it to path
// (mode 0600; an existing file is never overwritten) and returns its public
// key.
func WriteWorkerKey(path, name string) (string, error) {
	if err := ValidWorkerName(name); err != nil {
		return "", err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("queue: make a key: %w", err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("queue: make a key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("queue: make a key: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# c4book worker key: the NATS nkey seed of worker %q. Keep it\n", name)
	fmt.Fprintf(&b, "# secret, on that machine only (mode 0600).\n")
	fmt.Fprintf(&b, "# worker: %s\n# public key: %s\n%s\n", name, pub, seed)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("queue: write key file: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("queue: write key file: %w", err)
	}
	return pub, nil
}

// ErrKeyFile: a worker key file that cannot be used.
var ErrKeyFile = errors.New("unusable worker key file")

// ReadWorkerKey reads the key file at path (WriteWorkerKey) and returns
// the worker's name and public key. A file that others than its owner may
// read is refused, as ssh refuses such keys.
func ReadWorkerKey(path string) (WorkerKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return WorkerKey{}, fmt.Errorf("%w: %s has mode %v: others may read it; chmod 600 it", ErrKeyFile, path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	defer clear(data)
	var k WorkerKey
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# worker:"); ok {
			k.Name = strings.TrimSpace(name)
		}
	}
	if err := ValidWorkerName(k.Name); err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %s: no valid \"# worker: NAME\" line: %w", ErrKeyFile, path, err)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %s: %w", ErrKeyFile, path, err)
	}
	defer kp.Wipe()
	if k.PublicKey, err = kp.PublicKey(); err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %s: %w", ErrKeyFile, path, err)
	}
	return k, nil
}

// ServerConfUsers returns the users of an external nats-server's
// authorization block (its configuration file's syntax) that give the
// same rights as the embedded server with workers: the coordinator (and
// the operator) as the user and password of the environment variables
// C4BOOK_NATS_USER and C4BOOK_NATS_PASSWORD of nats-server, with every
// right, and each worker by its nkey with WorkerPermissions.
// scripts/nats-server-keys.conf includes it (c4book worker conf writes
// it); nats-server takes a new one when it reloads its configuration.
func ServerConfUsers(workers []WorkerKey) []byte {
	quote := func(subjects []string) string {
		q := make([]string, len(subjects))
		for i, s := range subjects {
			q[i] = `"` + s + `"`
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	var b bytes.Buffer
	b.WriteString("# c4book's users of nats-server (c4book worker conf): included by the\n")
	b.WriteString("# authorization block of scripts/nats-server-keys.conf.\n")
	b.WriteString("users = [\n")
	b.WriteString("  # the coordinator and the operator: every right\n")
	b.WriteString("  {user: $C4BOOK_NATS_USER, password: $C4BOOK_NATS_PASSWORD}\n")
	for _, w := range workers {
		pub, sub := WorkerPermissions(w.Name)
		fmt.Fprintf(&b, "  # worker %s\n  {nkey: %s, permissions: {publish: {allow: %s}, subscribe: {allow: %s}}}\n",
			w.Name, w.PublicKey, quote(pub), quote(sub))
	}
	b.WriteString("]\n")
	return b.Bytes()
}
