package communicator_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// largeCallers is the number of goroutines calling in BenchmarkLargeEcho, as in issue 9's table.
const largeCallers = 4

// BenchmarkLargeEcho measures echo calls of 64 KiB, 1 MiB and 8 MiB bodies (InvokeRaw, so the
// bytes are the payload and nothing is marshalled) from 4 goroutines over loopback to the
// project's server, with one net thread. Bytes/s counts the request body once; allocations are
// the client's and the in-process server's together. Run with
//
//	go test -run '^$' -bench BenchmarkLargeEcho -benchmem ./communicator
func BenchmarkLargeEcho(b *testing.B) {
	for _, size := range largeSizes {
		b.Run(size.name, func(b *testing.B) {
			e := startEchoServer(b, false)
			cfg := conf.Default()
			largeConf(&cfg)
			comm, err := communicator.New(cfg, communicator.WithLogger(zap.NewNop()))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = comm.Close() })
			sp := objProxy(b, comm, largeServant, tcpEndpoint(e.addr))
			body := payload(size.n, 1)
			ctx := context.Background()
			if _, err := sp.InvokeRaw(ctx, "EchoRaw", body); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			b.ResetTimer()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			for range largeCallers {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						got, err := sp.InvokeRaw(ctx, "EchoRaw", body)
						if err != nil {
							b.Error(err)
							return
						}
						if len(got) != len(body) {
							b.Errorf("echo of %d bytes returned %d", len(body), len(got))
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
