package communicator_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestDeadlineOverflow (issue 16 item 4): a timeout of math.MaxInt64 or a context deadline in
// the year 2500 is "no deadline soon", not one in the past: sync and async calls are sent and
// answered, and the server is sent a sane iTimeout (positive int32 ms). WithTimeout(0) and
// negative timeouts fail at once, unsent, with ErrInvalidTimeout, and an async call so refused
// gets no callback.
func TestDeadlineOverflow(t *testing.T) {
	seen := make(chan *server.Current, 16)
	g := startGreeter(t, "g", serverOpt{seen: seen})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	far, cancel := context.WithDeadline(context.Background(), time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC))
	defer cancel()
	cases := []struct {
		name string
		ctx  context.Context
		opts []servantproxy.CallOption
	}{
		{"WithTimeout(MaxInt64)", context.Background(), []servantproxy.CallOption{servantproxy.WithTimeout(math.MaxInt64)}},
		{"ctx deadline in 2500", far, nil},
		{"both", far, []servantproxy.CallOption{servantproxy.WithTimeout(math.MaxInt64)}},
	}
	for _, tc := range cases {
		if _, err := sayHello(tc.ctx, sp, "s", 1, tc.opts...); err != nil {
			t.Errorf("%s: sync call: %v", tc.name, err)
		}
		done := make(chan error, 1)
		rsp := new(hellopb.HelloReply)
		if err := sp.AsyncInvoke(tc.ctx, "SayHello", &hellopb.HelloRequest{Name: "a", Seq: 2}, rsp, func(err error) { done <- err }, tc.opts...); err != nil {
			t.Errorf("%s: AsyncInvoke: %v", tc.name, err)
			continue
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: async call: %v", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no callback within 10s", tc.name)
		}
	}
	for range 2 * len(cases) {
		select {
		case cur := <-seen:
			if cur.Timeout <= 0 {
				t.Errorf("server saw iTimeout %d, want a positive int32", cur.Timeout)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a call did not reach the server")
		}
	}

	for _, d := range []time.Duration{0, -time.Second} {
		_, err := sayHello(context.Background(), sp, "s", 3, servantproxy.WithTimeout(d))
		if !errors.Is(err, servantproxy.ErrInvalidTimeout) {
			t.Errorf("sync WithTimeout(%v): %v, want ErrInvalidTimeout", d, err)
		}
		err = sp.AsyncInvoke(context.Background(), "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply), func(error) {
			t.Errorf("callback of a call refused for WithTimeout(%v) ran", d)
		}, servantproxy.WithTimeout(d))
		if !errors.Is(err, servantproxy.ErrInvalidTimeout) {
			t.Errorf("async WithTimeout(%v): %v, want ErrInvalidTimeout", d, err)
		}
	}
	select {
	case cur := <-seen:
		t.Errorf("a call with an invalid timeout reached the server: %s", cur.Func)
	case <-time.After(100 * time.Millisecond):
	}
}
