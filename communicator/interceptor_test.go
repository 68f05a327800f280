package communicator_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
)

// TestClientInterceptor wraps every call with an interceptor that adds a context key and
// records how the call ended: the server sees the key, and End runs exactly once per call with
// the endpoint and return code, for sync, async, one-way calls and a server error.
func TestClientInterceptor(t *testing.T) {
	seen := make(chan *server.Current, 16)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	var mu sync.Mutex
	var ended []interceptor.CallInfo
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.SetContext("x-test", info.Function)
		info.OnEnd(func(i *interceptor.CallInfo) {
			mu.Lock()
			ended = append(ended, *i)
			mu.Unlock()
		})
		return next(ctx, info)
	}
	comm, err := communicator.New(conf.Default(), communicator.WithInterceptor(icpt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	if _, err := sayHello(ctx, sp, "sync", 1); err != nil {
		t.Fatal(err)
	}
	if cur := <-seen; cur.Context["x-test"] != "SayHello" {
		t.Errorf("server saw context %v, want x-test=SayHello", cur.Context)
	}
	done, err := asyncHello(t, ctx, sp, "async", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitErr(done, 5*time.Second, "async call"); err != nil {
		t.Fatal(err)
	}
	<-seen
	if err := onewayHello(ctx, sp, "oneway", 3); err != nil {
		t.Fatal(err)
	}
	<-seen
	var se *communicator.ServerError
	if _, err := sp.InvokeRaw(ctx, "NoSuchFunction", nil); !errors.As(err, &se) {
		t.Fatalf("unknown function: %v", err)
	}

	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n := len(ended)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a second End would show up here
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 4 {
		t.Fatalf("End ran %d times for 4 calls: %+v", len(ended), ended)
	}
	kinds := map[string]bool{}
	for _, e := range ended {
		if e.Endpoint != g.addr {
			t.Errorf("%s: End saw endpoint %q, want %q", e.Function, e.Endpoint, g.addr)
		}
		switch {
		case e.Function == "NoSuchFunction":
			if e.Ret == 0 || e.Err == nil {
				t.Errorf("server error: End saw ret %d err %v", e.Ret, e.Err)
			}
			kinds["error"] = true
		case e.Err != nil:
			t.Errorf("%s: End saw error %v", e.Function, e.Err)
		case e.Async:
			kinds["async"] = true
		case e.Oneway:
			kinds["oneway"] = true
		default:
			kinds["sync"] = true
		}
	}
	if len(kinds) != 4 {
		t.Errorf("End saw kinds %v, want sync, async, oneway and error", kinds)
	}
}
