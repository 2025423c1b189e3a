package queue

import (
	"encoding/base64"
	"fmt"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Signed results. The server lets a worker with a key publish on its own
// result subject only, but that does not make every message there the
// worker's: a worker may ask the server for something (the next task, a
// stream's info) with another worker's result subject as the reply
// subject, and the server writes its answer there; a holder of the
// operator's token may publish anywhere. So a worker with a key signs
// each result it publishes with that key (ed25519, the nkey's), and the
// coordinator checks the signature with the public key the book registers
// for the worker the subject names (ResultMsg.SignedBy): a result on a
// registered worker's subject that its key did not sign is refused, and
// not counted against that worker, who did not send it.
//
// The signature covers the message's data, which holds the job, the task
// and the worker's name: it cannot be moved to another result, and the
// same result published again is a duplicate.
//
//	header C4book-Signature: base64 (standard, padded) of the 64-byte
//	                         ed25519 signature of the data

// signatureHeader names the header of a result's signature.
const signatureHeader = "C4book-Signature"

// loadSigner reads the seed of the worker key file path, for signing.
func loadSigner(path string) (nkeys.KeyPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	defer clear(data)
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeyFile, path, err)
	}
	return kp, nil
}

// sign adds the signature of m's data by kp to m.
func sign(kp nkeys.KeyPair, m *nats.Msg) error {
	sig, err := kp.Sign(m.Data)
	if err != nil {
		return fmt.Errorf("queue: sign a result: %w", err)
	}
	m.Header.Set(signatureHeader, base64.StdEncoding.EncodeToString(sig))
	return nil
}

// SignedBy reports whether the result was signed by the worker key whose
// public key (an nkey user key, "U...") is publicKey.
func (m *ResultMsg) SignedBy(publicKey string) bool {
	if m.signature == "" {
		return false
	}
	sig, err := base64.StdEncoding.DecodeString(m.signature)
	if err != nil {
		return false
	}
	kp, err := nkeys.FromPublicKey(publicKey)
	if err != nil {
		return false
	}
	return kp.Verify(m.data, sig) == nil
}
