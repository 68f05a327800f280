package netthread

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/server"
)

// held is a net thread with an ObjectProxy for a real server on loopback whose handler (Hold)
// echoes each request, but only once the test lets it: it reports each request's length on
// started, then waits for a value on release. Everything is closed when the test ends.
type held struct {
	th      *Thread
	o       *objectproxy.ObjectProxy
	obj     string
	started chan int
	release chan struct{}
}

func newHeld(t *testing.T) *held {
	h := &held{started: make(chan int, 1), release: make(chan struct{})}
	h.serve(t, func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		h.started <- len(req)
		<-h.release
		return append(rsp, req...), nil
	})
	t.Cleanup(func() { close(h.release) }) // before Stop: a handler still held returns
	return h
}

// newEcho is a held whose server echoes every request at once (started and release unused).
func newEcho(t *testing.T) *held {
	h := &held{}
	h.serve(t, func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	})
	return h
}

// serve starts a real server on loopback whose Hold is fn, and h's net thread with an
// ObjectProxy for it; the test's cleanup stops both.
func (h *held) serve(t *testing.T, fn server.HandlerFunc) {
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithWorkers(2))
	if err := s.Handle("Test.Held.HeldObj", "Hold", fn); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	h.th, err = New(Options{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.th.Close)
	target, err := endpoint.Parse("Test.Held.HeldObj@tcp -h 127.0.0.1 -p " + strconv.Itoa(addr.(*net.TCPAddr).Port))
	if err != nil {
		t.Fatal(err)
	}
	h.obj = target.Object
	if h.o, err = h.th.NewObjectProxy(target, objectproxy.Options{Balancer: "roundrobin"}); err != nil {
		t.Fatal(err)
	}
}

// submit hands the thread a call of Hold with body and a deadline in d; the caller owns c.
func (h *held) submit(body []byte, d time.Duration) (*call.Call, error) {
	c := call.Get()
	c.Dest, c.Servant, c.Func = h.o, h.obj, "Hold"
	c.Start = call.Now()
	c.Deadline = c.Start + int64(d)
	c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
		Version: codec.VersionTars, RequestID: codec.RequestIDUnassigned,
		ServantName: h.obj, FuncName: "Hold", Buffer: body, Timeout: int32(d / time.Millisecond),
	})
	return c, h.th.Submit(c)
}

// arrived waits until the server's handler has a request, and returns its length.
func (h *held) arrived(t *testing.T) int {
	t.Helper()
	select {
	case n := <-h.started:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the server")
		return 0
	}
}

// waitAll waits for wg's goroutines (what names them), and fails with every goroutine's stack if
// they are still running after a minute: a liveness bound, far above a busy machine's need.
func waitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not finish within a minute\n%s", what, closetest.Stacks())
	}
}
