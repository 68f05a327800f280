package communicator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// BenchmarkTLSSyncCall is BenchmarkSyncCall over plain TCP and over TLS (ssl endpoint,
// server.WithTLS), at 128 B and 64 KiB: the cost of TLS, measured in one process.
func BenchmarkTLSSyncCall(b *testing.B) {
	for _, size := range []int{128, 64 << 10} {
		for _, secure := range []bool{false, true} {
			name := fmt.Sprintf("tcp/%dB", size)
			if secure {
				name = fmt.Sprintf("tls/%dB", size)
			}
			b.Run(name, func(b *testing.B) {
				sp := tlsBenchSetup(b, secure)
				ctx := context.Background()
				body := strings.Repeat("x", size)
				b.SetParallelism(16)
				b.SetBytes(int64(2 * size))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					req := &hellopb.HelloRequest{Name: body}
					rsp := new(hellopb.HelloReply)
					for pb.Next() {
						if err := sp.Invoke(ctx, "SayHello", req, rsp); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// tlsBenchSetup starts an inline echo server, with TLS when secure, and a Communicator with
// one net thread.
func tlsBenchSetup(b *testing.B, secure bool) *servantproxy.ServantProxy {
	b.Helper()
	ca := tlstest.NewCA(b, "bench-ca")
	pair := ca.Issue(b, tlstest.Leaf{Name: "bench-server"})
	opts := []server.Option{server.WithNumEventLoop(1)}
	toml := ""
	if secure {
		cfg, err := tlsconn.ServerConfig(tlsconn.Files{Cert: pair.Cert, Key: pair.Key}, false)
		if err != nil {
			b.Fatal(err)
		}
		opts = append(opts, server.WithTLS(cfg))
		toml = fmt.Sprintf("ca = %q\n", ca.File)
	}
	s := server.New(opts...)
	err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName(), Seq: req.GetSeq()}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop(context.Background()) })
	cfg, err := conf.Parse([]byte(toml))
	if err != nil {
		b.Fatalf("conf does not have the TLS keys yet: %v", err)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.NewNop()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = comm.Close() })
	ep := (&greeter{addr: addr.String()}).endpoint()
	if secure {
		ep = "ssl" + strings.TrimPrefix(ep, "tcp")
	}
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+ep, &sp); err != nil {
		b.Fatalf("%v", err)
	}
	return &sp
}
