package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
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

// TestRunAccountsForLargePayloads checks bytes_per_call where a payload dwarfs everything
// else: the stdlib client allocates one array per call, the reply's payload (its request body,
// read buffer and output buffers are reused), so the accounting must come to about one
// payload, neither missing the large allocations nor charging the set-up to the calls.
func TestRunAccountsForLargePayloads(t *testing.T) {
	addr := serverProcess(t) // the server's allocations must not count
	const size = 1 << 20
	for _, client := range []string{"stdlib", "tarscomm"} {
		t.Run(client, func(t *testing.T) {
			var log strings.Builder
			res, err := Run(Config{
				Client:   client,
				Peer:     peer.ClientConfig{Addrs: []string{addr}, Timeout: 10 * time.Second},
				C:        2,
				N:        60,
				Duration: 30 * time.Second,
				Size:     size,
				Warmup:   100 * time.Millisecond,
				Log:      &log,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Calls != 60 || res.Errs != 0 {
				t.Fatalf("calls=%d errs=%d, want 60 and 0; log: %s", res.Calls, res.Errs, log.String())
			}
			perPayload := res.BytesPerCall / size
			t.Logf("%s", res)
			if perPayload < 0.9 || client == "stdlib" && perPayload > 1.5 {
				t.Errorf("bytes_per_call = %.0f, %.2f payloads: want about 1 (stdlib) or at least 0.9 (tarscomm)",
					res.BytesPerCall, perPayload)
			}
			if r, err := result.Parse(res.String()); err != nil || math.Abs(r.BytesPerCall-res.BytesPerCall) > 1 {
				t.Errorf("bytes_per_call does not survive the RESULT line: %v, %v", r.BytesPerCall, err)
			}
		})
	}
}

// serverProcess runs the echo server of startServer in a child process (this test binary,
// running TestHelperEchoServer) and returns its address; the child exits at the end of t.
func serverProcess(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperEchoServer$")
	cmd.Env = append(os.Environ(), "LOADGEN_ECHO_SERVER=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "echo-server-addr="); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return addr
		}
	}
	t.Fatalf("the server process printed no address: %v", sc.Err())
	return ""
}

// TestHelperEchoServer is not a test: in the child process of serverProcess it serves until
// its stdin closes.
func TestHelperEchoServer(t *testing.T) {
	if os.Getenv("LOADGEN_ECHO_SERVER") != "1" {
		t.Skip("the server process of serverProcess")
	}
	fmt.Printf("echo-server-addr=%s\n", startServer(t))
	_, _ = io.Copy(io.Discard, os.Stdin)
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

// TestRunForADuration also checks that Edge is called at the start and the end of the
// measured phase, in that order, and that the phase lasts from one to the other.
func TestRunForADuration(t *testing.T) {
	addr := startServer(t)
	var edges []string
	var at []time.Time
	res, err := Run(Config{
		Client:   "tarscomm",
		Peer:     peer.ClientConfig{Addrs: []string{addr}, Timeout: time.Second},
		C:        4,
		Duration: 300 * time.Millisecond,
		Size:     128,
		SrvPID:   0,
		Edge:     func(p string) { edges = append(edges, p); at = append(at, time.Now()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls == 0 || res.Errs != 0 || res.Secs < 0.29 || res.Secs > 1 {
		t.Fatalf("result %s: want calls, no errors, about 0.3 s", res)
	}
	if len(edges) != 2 || edges[0] != "start" || edges[1] != "end" || at[1].Sub(at[0]) < 290*time.Millisecond {
		t.Errorf("edges %v at %v, want start then end, the measured phase apart", edges, at)
	}
}
