package queue

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nats-io/nkeys"
)

// The files a connection or an embedded server reads (credentials, TLS
// certificates and keys) are read before anything is dialled or served,
// each error naming its configuration key and the path. nats.go reads
// them only while it connects, and reports a file it cannot read like a
// server it cannot reach: a worker whose nats.tls.ca was missing waited
// for its server forever instead of saying what was wrong. A file that
// cannot be read does not come by waiting; an error here wraps
// ErrInvalidOptions, which is not Transient.

// readConfigFile returns the contents of path, the file of configuration
// key key, or an error naming both.
func readConfigFile(key, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err // the path is in the message already
		}
		return nil, fmt.Errorf("%w: %s: %s: %v: give a file this process can read, or unset %s", ErrInvalidOptions, key, path, err, key)
	}
	return data, nil
}

// checkCreds checks the credentials file of nats.creds: readable, with a
// user JWT and its key's seed.
func checkCreds(path string) error {
	data, err := readConfigFile("nats.creds", path)
	if err != nil {
		return err
	}
	defer clear(data)
	if _, err := nkeys.ParseDecoratedJWT(data); err != nil {
		return fmt.Errorf("%w: nats.creds: %s holds no user JWT (%v): give the .creds file nsc or your operator made", ErrInvalidOptions, path, err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return fmt.Errorf("%w: nats.creds: %s holds no key seed (%v): give the .creds file nsc or your operator made", ErrInvalidOptions, path, err)
	}
	kp.Wipe()
	return nil
}

// checkTLSFiles checks the TLS files of nats.tls.cert, nats.tls.key and
// nats.tls.ca that are set: readable, a certificate and its key that go
// together, and an authority file that holds a PEM certificate.
func checkTLSFiles(cert, key, ca string) error {
	if cert != "" && key != "" {
		certPEM, err := readConfigFile("nats.tls.cert", cert)
		if err != nil {
			return err
		}
		keyPEM, err := readConfigFile("nats.tls.key", key)
		if err != nil {
			return err
		}
		defer clear(keyPEM)
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
			return fmt.Errorf("%w: nats.tls.cert %s and nats.tls.key %s: %v", ErrInvalidOptions, cert, key, err)
		}
	}
	if ca != "" {
		pem, err := readConfigFile("nats.tls.ca", ca)
		if err != nil {
			return err
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("%w: nats.tls.ca: %s holds no PEM certificate", ErrInvalidOptions, ca)
		}
	}
	return nil
}
