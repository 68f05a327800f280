package tlsconn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Files names the PEM files of one side's TLS settings, as TARS names them: ca (the
// certificates that sign the peer's), cert and key (this side's own certificate chain and
// private key).
type Files struct {
	CA   string // PEM file of trusted CA certificates; "" trusts the system's
	Cert string // PEM file of this side's certificate chain; with Key
	Key  string // PEM file of the private key of Cert
	// ServerName is the name the client verifies in the server's certificate; "" verifies the
	// endpoint's -h host (an IP address is checked against the certificate's IP addresses).
	ServerName string

	// MinVersion is the oldest TLS version spoken (tls.VersionTLS12 or tls.VersionTLS13); 0 is
	// TLS 1.2.
	MinVersion uint16
	// CipherSuites are the TLS 1.2 cipher suites offered or accepted (crypto/tls IDs); nil is
	// Go's default list. TLS 1.3's suites are not configurable.
	CipherSuites []uint16
}

// base returns the tls.Config every side starts from: f's minimum version (TLS 1.2 or later)
// and cipher suites.
func (f Files) base() *tls.Config {
	return &tls.Config{MinVersion: max(f.MinVersion, tls.VersionTLS12), CipherSuites: f.CipherSuites}
}

// ClientConfig builds the tls.Config of a client from f: TLS 1.2 or later (f.MinVersion, with
// f.CipherSuites), the server's
// certificate verified against f.CA (or the system's roots) and the server name, and f's
// certificate offered when the server asks for one. Each file is read once, now; errors name
// the file.
func ClientConfig(f Files) (*tls.Config, error) {
	cfg := f.base()
	cfg.ServerName = f.ServerName
	if f.CA != "" {
		pool, err := loadPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" || f.Key != "" {
		cert, err := loadPair(f)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// ServerConfig builds the tls.Config of a server from f: TLS 1.2 or later (f.MinVersion, with
// f.CipherSuites) with f's certificate
// and key (both required). When verifyClients is set, a client must present a certificate
// signed by f.CA (mutual TLS); otherwise f.CA is unused and clients are not asked for one.
func ServerConfig(f Files, verifyClients bool) (*tls.Config, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, fmt.Errorf("tlsconn: a TLS server needs both cert and key")
	}
	cert, err := loadPair(f)
	if err != nil {
		return nil, err
	}
	cfg := f.base()
	cfg.Certificates = []tls.Certificate{cert}
	if verifyClients {
		if f.CA == "" {
			return nil, fmt.Errorf("tlsconn: verifying client certificates needs a ca")
		}
		pool, err := loadPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

func loadPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tlsconn: ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsconn: ca %s: no PEM certificate in it", path)
	}
	return pool, nil
}

func loadPair(f Files) (tls.Certificate, error) {
	if f.Cert == "" || f.Key == "" {
		return tls.Certificate{}, fmt.Errorf("tlsconn: cert and key go together (cert %q, key %q)", f.Cert, f.Key)
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconn: cert %s, key %s: %w", f.Cert, f.Key, err)
	}
	return cert, nil
}
