package peer

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/server"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// startAll starts every server in this process (TarsGo allows one per process, so the
// servers are started once for the whole test binary).
func startAll(t *testing.T) map[string]string {
	t.Helper()
	if allAddrs != nil {
		return allAddrs
	}
	addrs := make(map[string]string)
	for _, name := range Servers() {
		s, err := StartServer(name, "127.0.0.1:0", ServerConfig{Loops: 1})
		if err != nil {
			t.Fatalf("start %s server: %v", name, err)
		}
		addrs[name] = s.Addr()
	}
	allAddrs = addrs
	return addrs
}

var allAddrs map[string]string

// serversOf returns the servers a client can call.
func serversOf(client string) []string {
	switch {
	case IsTARSClient(client):
		return []string{"tarscomm", "tarsgo"}
	}
	return []string{client}
}

func TestEveryClientEchoesThroughEveryServerItSpeaksTo(t *testing.T) {
	addrs := startAll(t)
	for _, client := range Clients() {
		for _, srv := range serversOf(client) {
			t.Run(client+"@"+srv, func(t *testing.T) {
				// Up to the large payloads of the driver's second matrix: every framework's
				// limits must let them through, both ways.
				cl, err := NewClient(client, ClientConfig{Addrs: []string{addrs[srv]}, Timeout: 10 * time.Second,
					Concurrency: 2, Payload: 8 << 20})
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				for i, size := range []int{0, 128, 64 << 10, 1 << 20, 8 << 20} {
					payload := bytes.Repeat([]byte{byte(i + 1)}, size)
					seq := uint64(i+1) << 20
					if err := callOnce(cl, client, payload, seq); err != nil {
						t.Fatalf("%d-byte echo: %v", size, err)
					}
				}
			})
		}
	}
}

// callOnce makes one call, synchronously or through a slot.
func callOnce(cl Client, name string, payload []byte, seq uint64) error {
	if name != "tarscomm-async" {
		return cl.NewCaller(1, payload).Call(seq)
	}
	done := make(chan error, 1)
	slot := cl.(AsyncClient).NewSlot(1, payload, func(err error) { done <- err })
	if err := slot.Start(seq); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		return errors.New("callback did not run in 5s")
	}
}

func TestRepliesThatDoNotEchoAreErrors(t *testing.T) {
	s := server.New(server.WithNumEventLoop(1))
	const bad = "Bench.Bad.Obj"
	err := server.HandleProto(s, bad, Method, func(_ context.Context, _ *server.Current, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
		if len(req.Data) > 0 {
			return &echopb.EchoRsp{Data: req.Data[1:], Seq: req.Seq}, nil // short payload
		}
		return &echopb.EchoRsp{Seq: req.Seq + 1}, nil // wrong seq
	})
	if err != nil {
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
	for _, client := range []string{"tarscomm", "tarscomm-async", "tarsgo", "stdlib"} {
		cl, err := NewClient(client, ClientConfig{Addrs: []string{addr.String()}, Servant: bad, Timeout: 3 * time.Second, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, payload := range [][]byte{nil, []byte("abc")} {
			if err := callOnce(cl, client, payload, 7); !errors.Is(err, ErrMismatch) {
				t.Errorf("%s, payload %q: err = %v, want ErrMismatch", client, payload, err)
			}
		}
		cl.Close()
	}
}

func TestUnknownNames(t *testing.T) {
	if _, err := NewClient("nope", ClientConfig{Addrs: []string{"127.0.0.1:1"}}); err == nil {
		t.Error("NewClient(nope) succeeded")
	}
	if _, err := StartServer("stdlib", "127.0.0.1:0", ServerConfig{}); err == nil {
		t.Error("StartServer(stdlib) succeeded: the baseline has no server")
	}
}
