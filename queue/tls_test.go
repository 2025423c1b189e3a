package queue

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a certificate authority and certificates it signed, written
// as PEM files in a temporary directory.
type testPKI struct {
	CA                    string // CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	OtherCA               string // a CA that signed nothing here
}

// newTestPKI generates a CA, a server certificate for 127.0.0.1 and
// localhost and a client certificate, all ECDSA P-256.
func newTestPKI(tb testing.TB) testPKI {
	tb.Helper()
	dir := tb.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			tb.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		return k
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			tb.Fatal(err)
		}
		return write(name, "EC PRIVATE KEY", der)
	}
	serial := int64(1)
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(serial),
			Subject:               pkix.Name{CommonName: name},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(24 * time.Hour),
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}
		serial++
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		if err != nil {
			tb.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			tb.Fatal(err)
		}
		return cert, k, der
	}
	caCert, caKey, caDER := newCA("c4book test CA")
	_, _, otherDER := newCA("c4book other CA")
	sign := func(name string, usage x509.ExtKeyUsage) (string, string) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		serial++
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			tb.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), writeKey(name+"-key.pem", k)
	}
	p := testPKI{CA: write("ca.pem", "CERTIFICATE", caDER), OtherCA: write("other-ca.pem", "CERTIFICATE", otherDER)}
	p.ServerCert, p.ServerKey = sign("server", x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = sign("client", x509.ExtKeyUsageClientAuth)
	return p
}
