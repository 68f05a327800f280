package peer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// TLS variants of the tarscomm and gRPC-go pairs: "tarscomm-tls" (ssl endpoints, server.WithTLS)
// and "grpc-tls" (credentials.NewTLS on both sides), TLS 1.3 with Go's defaults. The server
// certificate (ECDSA P-256, for 127.0.0.1 and localhost) and its CA are made once per machine
// in TLSDir, by the first server that needs them; clients trust that CA.
func init() {
	clients["tarscomm-tls"] = newTarscommTLSClient
	clients["grpc-tls"] = newGRPCTLSClient
	servers["tarscomm-tls"] = startTarscommTLSServer
	servers["grpc-tls"] = startGRPCTLSServer
}

// TLSDir holds ca.pem, server.pem and server.key: $BENCH_TLS_DIR, or tarscomm-bench-tls in
// the temporary directory.
func TLSDir() string {
	if d := os.Getenv("BENCH_TLS_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "tarscomm-bench-tls")
}

func tlsFiles() tlsconn.Files {
	d := TLSDir()
	return tlsconn.Files{CA: filepath.Join(d, "ca.pem"), Cert: filepath.Join(d, "server.pem"), Key: filepath.Join(d, "server.key")}
}

// ensureCerts makes the CA and the server certificate in TLSDir unless they are there.
func ensureCerts() error {
	f := tlsFiles()
	if _, err := os.Stat(f.Key); err == nil {
		return nil
	}
	if err := os.MkdirAll(TLSDir(), 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tarscomm bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "tarscomm bench server"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	// The key last, renamed into place: its presence says the set is complete.
	for _, w := range []struct {
		path, typ string
		der       []byte
	}{{f.CA, "CERTIFICATE", caDER}, {f.Cert, "CERTIFICATE", der}, {f.Key, "EC PRIVATE KEY", kder}} {
		tmp := w.path + ".tmp"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: w.typ, Bytes: w.der}), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, w.path); err != nil {
			return err
		}
	}
	return nil
}

func serverTLSConfig() (*tls.Config, error) {
	if err := ensureCerts(); err != nil {
		return nil, fmt.Errorf("peer: TLS certificates in %s: %w", TLSDir(), err)
	}
	return tlsconn.ServerConfig(tlsFiles(), false)
}

func clientTLSConfig() (*tls.Config, error) {
	return tlsconn.ClientConfig(tlsconn.Files{CA: tlsFiles().CA})
}

// startTarscommTLSServer is startTarscommServer with server.WithTLS.
func startTarscommTLSServer(addr string, cfg ServerConfig) (Server, error) {
	tc, err := serverTLSConfig()
	if err != nil {
		return nil, err
	}
	s := server.New(server.WithNumEventLoop(cfg.Loops), server.WithMaxPacketSize(MaxFrame), noBacklogCap, server.WithTLS(tc))
	if err := server.HandleProto(s, Servant, Method, echoTarscomm); err != nil {
		return nil, err
	}
	if _, err := s.Start(addr); err != nil {
		return nil, err
	}
	return tarscommServer{s}, nil
}

// newTarscommTLSClient is newTarscommClient over ssl endpoints, trusting the bench CA (the
// configuration's ca key).
func newTarscommTLSClient(cfg ClientConfig) (Client, error) {
	c, err := conf.Parse(fmt.Appendf(nil, "ca = %q\n", tlsFiles().CA))
	if err != nil {
		return nil, fmt.Errorf("peer: tarscomm-tls: %w", err)
	}
	if cfg.NetThreads > 0 {
		c.NetThread = cfg.NetThreads
	}
	c.SyncInvokeTimeout, c.AsyncInvokeTimeout = cfg.Timeout, cfg.Timeout
	c.AsyncQueueCap = max(c.AsyncQueueCap, 2*cfg.Concurrency)
	c.MaxPacketSize = MaxFrame
	c.SendBufferLimit = min(max(c.SendBufferLimit, cfg.Concurrency*(cfg.Payload+4<<10)), 1<<30)
	comm, err := communicator.New(c)
	if err != nil {
		return nil, err
	}
	eps, err := tarsEndpoints(cfg.Addrs)
	if err != nil {
		comm.Close()
		return nil, err
	}
	eps = strings.ReplaceAll("@"+eps, "@tcp ", "@ssl ")
	eps = strings.ReplaceAll(eps, ":tcp ", ":ssl ")
	cl := &tarscommClient{comm: comm}
	if err := comm.StringToProxy(cfg.Servant+eps, &cl.sp); err != nil {
		comm.Close()
		return nil, err
	}
	// Connect now, so that a TLS misconfiguration fails here rather than as errors of the run.
	if err := cl.sp.Invoke(context.Background(), Method, &echopb.EchoReq{Seq: 1}, new(echopb.EchoRsp)); err != nil {
		comm.Close()
		return nil, fmt.Errorf("peer: tarscomm-tls: first call: %w", err)
	}
	return cl, nil
}

func startGRPCTLSServer(addr string, _ ServerConfig) (Server, error) {
	tc, err := serverTLSConfig()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(tc)), grpc.MaxRecvMsgSize(MaxFrame), grpc.MaxSendMsgSize(MaxFrame))
	s.RegisterService(&grpcServiceDesc, grpcEcho{})
	go func() { _ = s.Serve(ln) }()
	return &grpcServer{s: s, addr: ln.Addr().String()}, nil
}

// newGRPCTLSClient is newGRPCClient with TLS transport credentials trusting the bench CA.
func newGRPCTLSClient(cfg ClientConfig) (Client, error) {
	tc, err := clientTLSConfig()
	if err != nil {
		return nil, err
	}
	c := &grpcClient{timeout: cfg.Timeout}
	for _, a := range cfg.Addrs {
		cc, err := grpc.NewClient(a, grpc.WithTransportCredentials(credentials.NewTLS(tc)),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxFrame), grpc.MaxCallSendMsgSize(MaxFrame)))
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		c.conns = append(c.conns, cc)
	}
	return c, nil
}
