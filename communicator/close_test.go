package communicator_test

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestCloseFailsInFlightCalls closes a Communicator with sync and async calls in flight: they
// end with ErrClosed, every callback has run when Close returns, later calls fail with
// ErrClosed, and Close is safe to call twice. TestMain checks no goroutine is left.
func TestCloseFailsInFlightCalls(t *testing.T) {
	g := startGreeter(t, "slow", serverOpt{block: true})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	const n = 10
	syncErrs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := sayHello(ctx, sp, "x", uint64(i))
			syncErrs <- err
		}()
	}
	var callbacks atomic.Int64
	var asyncErr atomic.Value
	for range n {
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(err error) {
			callbacks.Add(1)
			asyncErr.Store(err)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := closeComm(t, comm); err != nil {
		t.Fatal(err)
	}
	if got := callbacks.Load(); got != n {
		t.Fatalf("%d callbacks had run when Close returned, want %d", got, n)
	}
	if err, _ := asyncErr.Load().(error); !errors.Is(err, communicator.ErrClosed) {
		t.Fatalf("async call ended with %v, want ErrClosed", err)
	}
	for range n {
		select {
		case err := <-syncErrs:
			if !errors.Is(err, communicator.ErrClosed) {
				t.Fatalf("sync call ended with %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a sync call did not return after Close")
		}
	}
	if _, err := sayHello(ctx, sp, "late", 1); !errors.Is(err, communicator.ErrClosed) {
		t.Fatalf("call after Close: err = %v, want ErrClosed", err)
	}
	if _, err := comm.Proxy(servant + "@" + g.endpoint()); !errors.Is(err, communicator.ErrClosed) {
		t.Fatalf("Proxy after Close: err = %v, want ErrClosed", err)
	}
	if err := closeComm(t, comm); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestGarbageReplyClosesConnection points the client at a server that answers with garbage:
// the call fails with a connection error (not a timeout), nothing panics, and the client keeps
// working against a good endpoint.
func TestGarbageReplyClosesConnection(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply []byte
	}{
		{name: "huge length", reply: []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}},
		{name: "length below 4", reply: []byte{0, 0, 0, 2}},
		{name: "undecodable packet", reply: []byte{0, 0, 0, 9, 0xff, 0xee, 0xdd, 0xcc, 0xbb}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					buf := make([]byte, 4096)
					_, _ = c.Read(buf)
					_, _ = c.Write(tt.reply)
					_, _ = c.Read(buf) // until the client closes
					_ = c.Close()
				}
			}()
			t.Cleanup(func() { _ = ln.Close(); <-done })
			host, port, _ := net.SplitHostPort(ln.Addr().String())
			comm := newComm(t, nil)
			sp, err := comm.Proxy("Garbage.Obj@tcp -h " + host + " -p " + port)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = sp.InvokeRaw(testCtx(t), "f", []byte("x"))
			if !errors.Is(err, communicator.ErrConnection) {
				t.Fatalf("err = %v, want ErrConnection", err)
			}
			within(t, "noticing the garbage reply", time.Since(start), time.Second)
		})
	}
}
