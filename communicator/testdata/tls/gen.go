//go:build ignore

// gen writes the certificates of communicator's TLS example: a CA, a server certificate for
// 127.0.0.1 and localhost, and a client certificate, ECDSA P-256, valid until 2126. They protect
// nothing: their keys are public. Run from this directory: go run gen.go
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log"
	"math/big"
	"net"
	"os"
	"time"
)

var (
	notBefore = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter  = time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC)
)

func main() {
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tarscomm example CA"},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER := create(caTmpl, caTmpl, caKey, caKey)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		log.Fatal(err)
	}
	writePEM("ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) {
		key := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			NotBefore: notBefore, NotAfter: notAfter,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		writePEM(name+".pem", "CERTIFICATE", create(tmpl, ca, key, caKey))
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			log.Fatal(err)
		}
		writePEM(name+".key", "EC PRIVATE KEY", kder)
	}
	leaf("server", 2, x509.ExtKeyUsageServerAuth)
	leaf("client", 3, x509.ExtKeyUsageClientAuth)
}

func newKey() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	return k
}

func create(tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) []byte {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		log.Fatal(err)
	}
	return der
}

func writePEM(name, typ string, der []byte) {
	if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		log.Fatal(err)
	}
}
