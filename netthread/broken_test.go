package netthread

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestWakeFailureFailsHeldCalls: when a write to the anchor socket fails and the socket stays
// open (ENOBUFS, say), the loop can no longer be woken for sweeps, so a call waiting for a reply
// that will not come, with an hour to its deadline, must not wait for either: the thread fails
// it with errBroken, and refuses the next call. The call goes to a real server over loopback whose
// handler holds it until the test ends.
func TestWakeFailureFailsHeldCalls(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithWorkers(2))
	if err := s.Handle("Test.Held.HeldObj", "Hold", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		started <- struct{}{}
		<-release
		return append(rsp, req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})

	th, err := New(Options{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(th.Close)
	target, err := endpoint.Parse("Test.Held.HeldObj@tcp -h 127.0.0.1 -p " + strconv.Itoa(addr.(*net.TCPAddr).Port))
	if err != nil {
		t.Fatal(err)
	}
	o, err := th.NewObjectProxy(target, objectproxy.Options{Balancer: "roundrobin"})
	if err != nil {
		t.Fatal(err)
	}
	submit := func() (*call.Call, error) {
		c := call.Get()
		c.Dest, c.Servant, c.Func = o, target.Object, "Hold"
		c.Start = call.Now()
		c.Deadline = c.Start + int64(time.Hour)
		c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
			Version: codec.VersionTars, RequestID: codec.RequestIDUnassigned,
			ServantName: target.Object, FuncName: "Hold", Buffer: []byte("x"), Timeout: 3600000,
		})
		return c, th.Submit(c)
	}
	held, err := submit()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started: // written and at the server: only a reply or a sweep can end it now
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the server")
	}

	th.wakeFailed(syscall.ENOBUFS)

	select {
	case <-held.Done():
		if !errors.Is(held.Err, errBroken) {
			t.Errorf("the held call ended with %v, want errBroken", held.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held call was not failed after the wakeup socket failed")
	}
	call.Put(held)
	c, err := submit()
	if !errors.Is(err, errBroken) {
		t.Errorf("Submit after the wakeup failed: %v, want errBroken", err)
	}
	call.Put(c)
}
