// Package tlstest makes certificates for tests of TLS on loopback: a CA, and server or client
// certificates it signs (or that are expired, or for another host), written as PEM files in the
// test's temporary directory. Keys are ECDSA P-256: fast to make.
package tlstest

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

// CA is a certificate authority made for one test.
type CA struct {
	Cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	File   string // its certificate, PEM, in the test's temporary directory
	serial int64
}

// NewCA makes a CA named name and writes its certificate to a file.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Cert: cert, key: key, serial: 1}
	ca.File = write(t, name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// Leaf describes a certificate to issue.
type Leaf struct {
	Name    string   // common name, and file name prefix
	DNS     []string // DNS names; default "localhost"
	IPs     []net.IP // IP addresses; default 127.0.0.1
	Client  bool     // a client certificate (else a server certificate)
	Expired bool     // valid from 48 hours ago until one hour ago
}

// Pair is an issued certificate and its key, as PEM files.
type Pair struct {
	Cert, Key string // file paths
}

// Issue makes the certificate l describes, signed by ca, and writes it and its key to files.
func (ca *CA) Issue(t testing.TB, l Leaf) Pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if l.DNS == nil && l.IPs == nil {
		l.DNS, l.IPs = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: l.Name},
		DNSNames:     l.DNS,
		IPAddresses:  l.IPs,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if l.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if l.Expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{
		Cert: write(t, l.Name+".pem", "CERTIFICATE", der),
		Key:  write(t, l.Name+".key", "EC PRIVATE KEY", kder),
	}
}

func write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
