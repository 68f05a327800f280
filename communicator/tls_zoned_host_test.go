package communicator_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// TestTLSZonedIPv6Host: tlsconn.Files.ServerName says "" verifies the endpoint's -h host,
// "an IP address is checked against the certificate's IP addresses". An IPv6 address with a zone
// ("-h ::1%lo"; link-local addresses need one to be dialled at all) is dialled fine, but the zone
// is kept in the name handed to crypto/tls, which then does not see an IP address and checks it
// as a DNS name: the call failed before against a certificate whose IP SAN is exactly that
// address.
func TestTLSZonedIPv6Host(t *testing.T) {
	probe, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	_ = probe.Close()
	lo := loopbackName(t)
	ca := tlstest.NewCA(t, "ca")
	pair := ca.Issue(t, tlstest.Leaf{Name: "v6", IPs: []net.IP{net.IPv6loopback}})
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: ca.File, Cert: pair.Cert, Key: pair.Key}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.WithLogger(zaptest.NewLogger(t)), server.WithTLS(cfg), server.WithNumEventLoop(1))
	if err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName() + "@z", Seq: req.GetSeq()}, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "tls server", s) })
	port := a.(*net.TCPAddr).Port

	c := tlsComm(t, tomlTLS(ca.File), nil)
	ctx := testCtx(t)
	// The same server, by its address without and with the loopback interface's zone.
	plain, err := c.Proxy(fmt.Sprintf("%s@ssl -h ::1 -p %d", servant, port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(ctx, plain, "plain", 1); err != nil {
		t.Fatalf("ssl -h ::1: %v", err)
	}
	zoned, err := c.Proxy(fmt.Sprintf("%s@ssl -h ::1%%%s -p %d", servant, lo, port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(ctx, zoned, "zoned", 2); err != nil {
		t.Errorf("ssl -h ::1%%%s (certificate IP SAN ::1): %v", lo, err)
	}
}

// loopbackName returns the name of the loopback interface (to write ::1 with a zone).
func loopbackName(t *testing.T) string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Fatal("no loopback interface")
	return ""
}
