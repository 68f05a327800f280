package loadgen

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/server"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

// startServer starts tarscomm's echo server, and a servant that answers with the wrong seq.
func startServer(t *testing.T) string {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1))
	echo := func(_ context.Context, _ *server.Current, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
		return &echopb.EchoRsp{Data: req.Data, Seq: req.Seq}, nil
	}
	wrong := func(_ context.Context, _ *server.Current, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
		return &echopb.EchoRsp{Data: req.Data, Seq: req.Seq + 1}, nil
	}
	if err := server.HandleProto(s, peer.Servant, peer.Method, echo); err != nil {
		t.Fatal(err)
	}
	if err := server.HandleProto(s, "Bench.Wrong.Obj", peer.Method, wrong); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return addr.String()
}

func TestRunCountsEveryMeasuredCall(t *testing.T) {
	addr := startServer(t)
	for _, client := range []string{"tarscomm", "tarscomm-async", "stdlib"} {
		t.Run(client, func(t *testing.T) {
			var log strings.Builder
			res, err := Run(Config{
				Client:   client,
				Peer:     peer.ClientConfig{Addrs: []string{addr}, Timeout: 2 * time.Second},
				C:        8,
				N:        2000,
				Duration: 20 * time.Second,
				Size:     64,
				Warmup:   50 * time.Millisecond,
				Log:      &log,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Calls != 2000 || res.Errs != 0 {
				t.Fatalf("calls=%d errs=%d, want 2000 and 0; log: %s", res.Calls, res.Errs, log.String())
			}
			if res.FW != client || res.C != 8 || res.Size != 64 {
				t.Errorf("result names fw=%s c=%d size=%d", res.FW, res.C, res.Size)
			}
			if !(res.QPS > 0 && res.P50 > 0 && res.P50 <= res.P99 && res.P99 <= res.Max && res.Secs > 0) {
				t.Errorf("implausible result %s", res)
			}
			if math.IsNaN(res.AllocsPerCall) || math.IsNaN(res.ClientCPU) || !math.IsNaN(res.ServerCPU) {
				t.Errorf("allocs, client CPU must be measured and server CPU not (no -srvpid): %s", res)
			}
			if _, err := result.Parse(res.String()); err != nil {
				t.Errorf("result line does not parse: %v", err)
			}
		})
	}
}

func TestRunReportsErrors(t *testing.T) {
	addr := startServer(t)
	var log strings.Builder
	res, err := Run(Config{
		Client:   "tarscomm",
		Peer:     peer.ClientConfig{Addrs: []string{addr}, Servant: "Bench.Wrong.Obj", Timeout: time.Second},
		C:        2,
		N:        100,
		Duration: 10 * time.Second,
		Size:     16,
		Log:      &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 100 || res.Errs != 100 || res.QPS != 0 {
		t.Fatalf("calls=%d errs=%d qps=%v, want 100 calls, all failed, qps 0", res.Calls, res.Errs, res.QPS)
	}
	if !strings.Contains(log.String(), "100 of 100 calls failed") || !strings.Contains(log.String(), "seq") {
		t.Errorf("log does not describe the errors: %q", log.String())
	}
}

func TestRunForADuration(t *testing.T) {
	addr := startServer(t)
	res, err := Run(Config{
		Client:   "tarscomm",
		Peer:     peer.ClientConfig{Addrs: []string{addr}, Timeout: time.Second},
		C:        4,
		Duration: 300 * time.Millisecond,
		Size:     128,
		SrvPID:   0,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls == 0 || res.Errs != 0 || res.Secs < 0.29 || res.Secs > 1 {
		t.Fatalf("result %s: want calls, no errors, about 0.3 s", res)
	}
}
