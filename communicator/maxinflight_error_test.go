package communicator_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestMaxInflightErrorSaysWhichLimit: a call refused by the client's max-inflight fails with
// ErrOverload, whose text says which limit refused it, as every ErrQueueFull does ("queue-cap
// calls wait for their net thread", "asyncqueuecap callbacks wait for an async worker", ...).
// Before, it read only "servant overloaded, call not sent": a user could not tell it from the
// server's own -9 overload (which matches ErrOverload too), nor find the key to look at (found
// by a review of backpressure).
func TestMaxInflightErrorSaysWhichLimit(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	rel := func() { once.Do(func() { close(release) }) }
	entered := make(chan struct{}, 4)
	_, addr := startEcho(t, "server", func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return append(rsp, req...), nil
	})
	t.Cleanup(rel)

	comm := newComm(t, func(c *conf.Config) {
		c.SyncInvokeTimeout = live
		c.Servants = map[string]conf.Servant{servant: {MaxInflight: 1}}
	})
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(addr), &sp); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	held := make(chan error, 1)
	go func() {
		_, err := sp.InvokeRaw(ctx, "Echo", []byte("hold"))
		held <- err
	}()
	select {
	case <-entered:
	case <-time.After(live):
		t.Fatal("the held call never reached its handler")
	}
	_, err := sp.InvokeRaw(ctx, "Echo", []byte("x"))
	rel()
	if herr := <-held; herr != nil {
		t.Errorf("held call: %v", herr)
	}
	if !errors.Is(err, servantproxy.ErrOverload) {
		t.Fatalf("second call with max-inflight = 1: got %v, want ErrOverload", err)
	}
	t.Logf("the refused call's error: %q", err.Error())
	if !strings.Contains(err.Error(), "max-inflight (1)") {
		t.Errorf("the error of a call max-inflight refused does not name the limit: %q", err.Error())
	}
}
