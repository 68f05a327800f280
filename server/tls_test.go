package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// tlsSetup is a CA with a server certificate for 127.0.0.1, and client certificates signed by
// that CA and by another.
type tlsSetup struct {
	ca, otherCA           *tlstest.CA
	server, client, rogue tlstest.Pair
}

func newTLSSetup(t testing.TB) *tlsSetup {
	s := &tlsSetup{ca: tlstest.NewCA(t, "ca"), otherCA: tlstest.NewCA(t, "other")}
	s.server = s.ca.Issue(t, tlstest.Leaf{Name: "server"})
	s.client = s.ca.Issue(t, tlstest.Leaf{Name: "client", Client: true})
	s.rogue = s.otherCA.Issue(t, tlstest.Leaf{Name: "rogue", Client: true})
	return s
}

// startTLSServer starts an echo server with TLS, mutual when mutual is set.
func startTLSServer(t testing.TB, ts *tlsSetup, mutual bool, opts ...Option) (*Server, string, chan net.Addr) {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: ts.ca.File, Cert: ts.server.Cert, Key: ts.server.Key}, mutual)
	if err != nil {
		t.Fatal(err)
	}
	remotes := make(chan net.Addr, 16)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "echo", func(ctx context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
			select {
			case remotes <- cur.RemoteAddr:
			default:
			}
			return append(rsp, req...), nil
		})
	}, append([]Option{WithTLS(cfg), WithNumEventLoop(2)}, opts...)...)
	return s, addr, remotes
}

// clientConfig trusts ts's CA and offers pair if it is set.
func clientConfig(t testing.TB, ts *tlsSetup, pair *tlstest.Pair) *tls.Config {
	t.Helper()
	f := tlsconn.Files{CA: ts.ca.File}
	if pair != nil {
		f.Cert, f.Key = pair.Cert, pair.Key
	}
	cfg, err := tlsconn.ClientConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServerName = "127.0.0.1"
	return cfg
}

// dialTLS connects with cfg; the handshake runs on first use.
func dialTLS(t testing.TB, addr string, cfg *tls.Config) *client {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("tls dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, c: c, fr: codec.NewFrameReader(c, 0)}
}

// TestTLSServerEcho serves TLS 1.2 and 1.3 clients, small and large bodies, pipelined, and tells
// handlers the client's own TCP address.
func TestTLSServerEcho(t *testing.T) {
	ts := newTLSSetup(t)
	_, addr, remotes := startTLSServer(t, ts, false)
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := clientConfig(t, ts, nil)
		cfg.MinVersion, cfg.MaxVersion = version, version
		c := dialTLS(t, addr, cfg)
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: many TLS records
		var out []byte
		for i := int32(1); i <= 20; i++ {
			body := []byte("hello")
			if i%5 == 0 {
				body = big
			}
			out = codec.AppendRequest(out, request(i, "App.S.Obj", "echo", body))
		}
		c.write(out)
		for i := int32(1); i <= 20; i++ {
			rsp := c.recv()
			if rsp.RequestID != i || rsp.Ret != codec.RetOK {
				t.Fatalf("TLS %x: reply %d: id %d ret %d", version, i, rsp.RequestID, rsp.Ret)
			}
			if want := 5; i%5 == 0 && len(rsp.Buffer) != len(big) || i%5 != 0 && len(rsp.Buffer) != want {
				t.Fatalf("TLS %x: reply %d: %d bytes", version, i, len(rsp.Buffer))
			}
		}
		state := c.c.(*tls.Conn).ConnectionState()
		if state.Version != version {
			t.Fatalf("negotiated %x, want %x", state.Version, version)
		}
		local := c.c.LocalAddr().String()
		select {
		case r := <-remotes:
			if r.String() != local {
				t.Fatalf("Current.RemoteAddr = %v, want the client's %s", r, local)
			}
		case <-time.After(testTimeout):
			t.Fatal("handler not called")
		}
		for len(remotes) > 0 {
			<-remotes
		}
	}
}

// TestTLSServerMutual requires client certificates: a client with one signed by the configured
// CA is served; a client without one, or with one from another CA, is refused and never reaches
// a handler.
func TestTLSServerMutual(t *testing.T) {
	ts := newTLSSetup(t)
	_, addr, remotes := startTLSServer(t, ts, true)

	c := dialTLS(t, addr, clientConfig(t, ts, &ts.client))
	if rsp := c.call(request(1, "App.S.Obj", "echo", []byte("x"))); rsp.Ret != codec.RetOK {
		t.Fatalf("with a good client certificate: ret %d", rsp.Ret)
	}
	<-remotes

	for _, tc := range []struct {
		name string
		pair *tlstest.Pair
		want string
	}{
		{"no certificate", nil, "certificate required"},
		// The client does not offer a certificate the server's CA list does not name.
		{"certificate from another CA", &ts.rogue, "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				cfg := clientConfig(t, ts, tc.pair)
				cfg.MaxVersion = version
				nc, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr, cfg)
				if err == nil {
					// TLS 1.3: the client finishes first; the refusal is the first read.
					_ = nc.SetDeadline(time.Now().Add(testTimeout))
					_, _ = nc.Write(codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", []byte("x"))))
					_, err = nc.Read(make([]byte, 1))
					_ = nc.Close()
				}
				// TLS 1.2 servers send a generic handshake_failure alert; 1.3 says which.
				want := tc.want
				if version == tls.VersionTLS12 {
					want = "handshake failure"
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("TLS %x: %v, want an error with %q", version, err, want)
				}
			}
			select {
			case r := <-remotes:
				t.Fatalf("a refused client reached the handler from %v", r)
			default:
			}
		})
	}
}

// TestTLSServerRefusesPlainAndStalled: a plain TARS client gets no reply and is disconnected; a
// client that connects and never handshakes is disconnected at the handshake timeout; neither
// keeps a goroutine after Stop.
func TestTLSServerRefusesPlainAndStalled(t *testing.T) {
	ts := newTLSSetup(t)
	s, addr, remotes := startTLSServer(t, ts, false, WithHandshakeTimeout(200*time.Millisecond))

	plain := dial(t, addr)
	plain.write(codec.AppendRequest(nil, request(1, "App.S.Obj", "echo", []byte("x"))))
	f, err := plain.readFrame(testTimeout)
	if err == nil {
		if _, derr := codec.FrameLength(f, 0); derr == nil && f[0] == 0 {
			t.Fatalf("a plain client got a TARS frame %x", f)
		}
	}

	stalled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	start := time.Now()
	_ = stalled.SetReadDeadline(time.Now().Add(testTimeout))
	_, err = stalled.Read(make([]byte, 1))
	if took := time.Since(start); err == nil || errors.Is(err, os.ErrDeadlineExceeded) || took < 150*time.Millisecond {
		t.Fatalf("stalled client: read %v after %v, want the server to close near 200ms", err, took)
	}
	select {
	case r := <-remotes:
		t.Fatalf("handler called from %v", r)
	default:
	}

	// Connections open at Stop: Stop closes them and returns; goleak checks the rest.
	var open sync.WaitGroup
	for range 4 {
		c := dialTLS(t, addr, clientConfig(t, ts, nil))
		c.call(request(2, "App.S.Obj", "echo", []byte("y")))
		open.Go(func() { _, _ = c.readFrame(testTimeout) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	open.Wait()
	if _, err := tls.Dial("tcp", addr, clientConfig(t, ts, nil)); err == nil {
		t.Fatal("the TLS listener still accepts after Stop")
	}
}

// TestTLSServerConfigErrors: ServerConfig names what is missing.
func TestTLSServerConfigErrors(t *testing.T) {
	ts := newTLSSetup(t)
	if _, err := tlsconn.ServerConfig(tlsconn.Files{Cert: ts.server.Cert}, false); err == nil {
		t.Fatal("cert without key accepted")
	}
	if _, err := tlsconn.ServerConfig(tlsconn.Files{Cert: ts.server.Cert, Key: ts.server.Key}, true); err == nil {
		t.Fatal("mutual TLS without ca accepted")
	}
	_, err := tlsconn.ServerConfig(tlsconn.Files{Cert: ts.server.Cert, Key: ts.client.Key}, false)
	if err == nil || !strings.Contains(err.Error(), ts.server.Cert) {
		t.Fatalf("mismatched key: %v, want an error naming the cert file", err)
	}
}
