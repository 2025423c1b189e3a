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
// An observer's key file (WriteKey with RoleObserver) says "observer"
// where a worker's says "worker", in its first comment and in that line,
// so that neither command takes the other's key for its own:
//
//	# c4book observer key: the NATS nkey seed of observer "ops". Keep it
//	# secret, on the machines you watch the cluster from (mode 0600).
//	# observer: ops
//	# public key: UAB...
//	SUA...
//
// Files written before observers existed are all workers' keys.

// Role is what a registered key may do on the server.
type Role string

// The roles of keys.
const (
	// RoleWorker solves tasks and publishes its own results
	// (WorkerPermissions).
	RoleWorker Role = "worker"
	// RoleObserver reads the cluster's status, what c4book status shows,
	// and nothing else (ObserverPermissions).
	RoleObserver Role = "observer"
)

// WorkerKey is a registered key as the server knows it: a name, the
// public half of its nkey and its role. The name is a worker's or an
// observer's; names are unique among both, since each gets the inbox of
// its name (WorkerInbox).
type WorkerKey struct {
	Name      string // ValidWorkerName
	PublicKey string // nkey user public key, "U..."
	Role      Role   // RoleWorker or RoleObserver; "" is RoleWorker
}

// permissions returns what the server lets k do: its role's permissions.
// ok is false for a role this package does not know: such a key is not
// admitted at all (an empty allow list would allow everything).
func (k WorkerKey) permissions() (publish, subscribe []string, ok bool) {
	switch k.Role {
	case "", RoleWorker:
		publish, subscribe = WorkerPermissions(k.Name)
	case RoleObserver:
		publish, subscribe = ObserverPermissions(k.Name)
	default:
		return nil, nil, false
	}
	return publish, subscribe, true
}

// workerInboxPrefix starts the reply subjects of a worker or observer
// that connects with a key: "_INBOX_c4book.<name>", so that it may
// subscribe to its own replies only.
const workerInboxPrefix = "_INBOX_c4book."

// WorkerInbox returns the inbox prefix of the worker or observer name.
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
// nothing more: bind to the consumers of the task lanes (the only
// consumers of the task stream), read their AckWait and list their state,
// pull tasks and answer them (ack, nak, in progress, term), publish
// results of any job on its own subject only, put and remove its own
// status, and receive the replies to its own requests. It may not
// create, purge or delete streams or consumers, read the result stream,
// read other workers' replies or publish as another worker.
func WorkerPermissions(name string) (publish, subscribe []string) {
	publish = []string{
		"$JS.API.CONSUMER.INFO." + TaskStream + ".*",     // Tasks binds the lanes, TaskSource.AckWait
		"$JS.API.CONSUMER.LIST." + TaskStream,            // TaskSource chooses a lane
		"$JS.API.CONSUMER.MSG.NEXT." + TaskStream + ".*", // TaskSource.Next
		"$JS.ACK." + TaskStream + ".>",                   // TaskMsg replies
		"$JS.API.STREAM.INFO." + ResultStream,            // PublishResult binds the stream
		resultSubjectPrefix + "*." + name,                // PublishResult
		"$JS.API.STREAM.INFO." + statusStream,            // the status bucket
		"$KV." + StatusBucket + "." + workerKey(name),    // PutWorkerStatus, RemoveWorkerStatus
	}
	subscribe = []string{WorkerInbox(name) + ".>"}
	return publish, subscribe
}

// ObserverPermissions returns what the server lets observer name do, and
// nothing more: read the status bucket, as c4book status (and --watch,
// --json) does, and receive the replies to its own requests. Status reads
// nothing of the task or result streams.
//
//	publish
//	  $JS.API.STREAM.INFO.KV_c4book-status
//	      bind the bucket, and list its keys: the subjects of its stream
//	      (Conn.Workers, Conn.Jobs)
//	  $JS.API.DIRECT.GET.KV_c4book-status.$KV.c4book-status.>
//	      read a key's latest value (KV Get: Conn.Workers, Conn.Jobs,
//	      Conn.JobStatus)
//	subscribe
//	  _INBOX_c4book.<name>.>
//	      the replies to its own requests (it connects with that inbox
//	      prefix, as a worker does)
//
// Every other request is refused: results, task pulls and acks, status
// puts and deletions, and every change of a stream or consumer. Consumer
// creation is refused even on the status bucket's stream, though nats.go
// lists and watches a bucket's keys through a consumer it creates: a
// push consumer delivers to any subject its creator names, and a message
// delivered on a subject of the task stream is stored there, so a key
// allowed to create one could write tasks. Listing takes the stream's
// subjects instead (listStatuses).
func ObserverPermissions(name string) (publish, subscribe []string) {
	publish = []string{
		"$JS.API.STREAM.INFO." + statusStream,                                  // bind the bucket, list its keys
		"$JS.API.DIRECT.GET." + statusStream + "." + statusSubjectPrefix + ">", // Get
	}
	subscribe = []string{WorkerInbox(name) + ".>"}
	return publish, subscribe
}

// nkeyUsers returns the server's nkey users: each worker and observer
// with the permissions of its role, and the coordinator's public key
// with every right.
func nkeyUsers(workers []WorkerKey, coordinator string) []*server.NkeyUser {
	users := []*server.NkeyUser{{Nkey: coordinator}}
	for _, w := range workers {
		pub, sub, ok := w.permissions()
		if !ok {
			continue
		}
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
// key. It is WriteKey for RoleWorker.
func WriteWorkerKey(path, name string) (string, error) {
	return WriteKey(path, name, RoleWorker)
}

// WriteKey makes a new nkey for the worker or observer name, as role
// says, writes it to path (mode 0600; an existing file is never
// overwritten) and returns its public key.
func WriteKey(path, name string, role Role) (string, error) {
	if err := ValidWorkerName(name); err != nil {
		return "", err
	}
	where := "on that machine only"
	switch role {
	case RoleWorker:
	case RoleObserver:
		where = "on the machines you watch the cluster from"
	default:
		return "", fmt.Errorf("%w: key of %q: role %q: want %q or %q", ErrInvalidOptions, name, role, RoleWorker, RoleObserver)
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
	fmt.Fprintf(&b, "# c4book %s key: the NATS nkey seed of %s %q. Keep it\n", role, role, name)
	fmt.Fprintf(&b, "# secret, %s (mode 0600).\n", where)
	fmt.Fprintf(&b, "# %s: %s\n# public key: %s\n%s\n", role, name, pub, seed)
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

// ErrKeyFile: a worker's or observer's key file that cannot be used.
var ErrKeyFile = errors.New("unusable worker key file")

// ReadKey reads the key file at path (WriteKey) and returns the name,
// public key and role it holds. A file that others than its owner may
// read is refused, as ssh refuses such keys.
func ReadKey(path string) (WorkerKey, error) {
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
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for _, role := range []Role{RoleWorker, RoleObserver} {
			if name, ok := strings.CutPrefix(line, "# "+string(role)+":"); ok {
				k.Name, k.Role = strings.TrimSpace(name), role
				lines++
			}
		}
	}
	if lines > 1 {
		return WorkerKey{}, fmt.Errorf("%w: %s: %d \"# worker: NAME\" or \"# observer: NAME\" lines, want one", ErrKeyFile, path, lines)
	}
	if err := ValidWorkerName(k.Name); err != nil {
		return WorkerKey{}, fmt.Errorf("%w: %s: no valid \"# worker: NAME\" or \"# observer: NAME\" line: %w", ErrKeyFile, path, err)
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
// right, and each worker and observer by its nkey with the permissions
// of its role (WorkerPermissions, ObserverPermissions).
// scripts/deploy/nats-server-keys.conf includes it (c4book worker conf writes
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
	b.WriteString("# authorization block of scripts/deploy/nats-server-keys.conf.\n")
	b.WriteString("users = [\n")
	b.WriteString("  # the coordinator and the operator: every right\n")
	b.WriteString("  {user: $C4BOOK_NATS_USER, password: $C4BOOK_NATS_PASSWORD}\n")
	for _, w := range workers {
		pub, sub, ok := w.permissions()
		if !ok {
			fmt.Fprintf(&b, "  # %s: role %q unknown to this c4book: not admitted\n", w.Name, w.Role)
			continue
		}
		role := w.Role
		if role == "" {
			role = RoleWorker
		}
		fmt.Fprintf(&b, "  # %s %s\n  {nkey: %s, permissions: {publish: {allow: %s}, subscribe: {allow: %s}}}\n",
			role, w.Name, w.PublicKey, quote(pub), quote(sub))
	}
	b.WriteString("]\n")
	return b.Bytes()
}
