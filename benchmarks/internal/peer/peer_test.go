package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/server"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
	"github.com/tarscomm/tarscomm/benchmarks/internal/tarswire"
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
		return []string{"tarscomm", "tarsgo", "stdlib"}
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
	if _, err := StartServer("tarscomm-async", "127.0.0.1:0", ServerConfig{}); err == nil {
		t.Error("StartServer(tarscomm-async) succeeded: it is a client mode")
	}
}

// TestStdlibServerManyCallersAndStop: the floor's server answers many callers at once on one
// connection, each its own echo, small and large bodies mixed (the writer's batches then hold
// inline frames and attached bodies), and Stop ends every goroutine it started, with a client
// still connected.
func TestStdlibServerManyCallersAndStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := StartServer("stdlib", "127.0.0.1:0", ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const callers, calls = 16, 20
	for _, client := range []string{"stdlib", "tarscomm"} {
		cl, err := NewClient(client, ClientConfig{Addrs: []string{s.Addr()}, Timeout: 10 * time.Second,
			Concurrency: callers, Payload: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, callers)
		for w := range callers {
			size := 100 * w // below stdlibInlineMax
			if w%2 == 1 {
				size = (16 << 10) * w // at or above it
			}
			payload := bytes.Repeat([]byte{byte(w)}, size)
			caller := cl.NewCaller(w, payload)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					if err := caller.Call(uint64(w)<<32 | uint64(i)); err != nil {
						errs <- fmt.Errorf("%s caller %d (%d B), call %d: %w", client, w, size, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if client == "tarscomm" {
			cl.Close()
		} else {
			defer cl.Close() // still connected when the server stops
		}
	}
	s.Stop()
}

// TestStdlibServerErrors: a servant or function the floor's server does not have is an error
// reply (TARS's -4 and -3), and the connection goes on serving.
func TestStdlibServerErrors(t *testing.T) {
	s, err := StartServer("stdlib", "127.0.0.1:0", ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	nc, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	body, _ := proto.Marshal(&echopb.EchoReq{Data: []byte("hi"), Seq: 3})
	var out []byte
	out = tarswire.AppendRequest(out, 1, "No.Such.Obj", Method, body, 1000)
	out = tarswire.AppendRequest(out, 2, Servant, "Nope", body, 1000)
	out = tarswire.AppendRequest(out, 3, Servant, Method, body, 1000)
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	want := map[int32]int32{1: retNoServant, 2: retNoFunc, 3: 0}
	got := map[int32]int32{}
	var rsp echopb.EchoRsp
	err = readFrames(nc, MaxFrame, func(frame []byte) error {
		var r tarswire.Response
		if err := tarswire.DecodeResponse(frame, &r); err != nil {
			return err
		}
		got[r.RequestID] = r.Ret
		if r.Ret == 0 {
			if err := proto.Unmarshal(r.Body, &rsp); err != nil || rsp.Seq != 3 || string(rsp.Data) != "hi" {
				t.Errorf("echo: %v, %v", &rsp, err)
			}
		} else if r.Desc == "" {
			t.Errorf("request %d: ret %d without a description", r.RequestID, r.Ret)
		}
		if len(got) == len(want) {
			return io.EOF
		}
		return nil
	}, nil)
	if err != io.EOF {
		t.Fatalf("reading the replies: %v (have %v)", err, got)
	}
	if !maps.Equal(got, want) {
		t.Errorf("return codes %v, want %v", got, want)
	}
}
