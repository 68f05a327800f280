package communicator_test

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
)

// TestDyeFromInterceptorCtx: dye.WithKey "returns a context whose calls are dyed with key", and a
// client interceptor may hand next a derived ctx: a dyeing interceptor that hands next
// dye.WithKey(ctx, "k1") gets a dyed request on the wire. Before, the request went undyed: the
// dyeing was decided from the caller's ctx before the interceptors ran.
func TestDyeFromInterceptorCtx(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		return next(dye.WithKey(ctx, "k1"), info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	if _, err := sayHello(testCtx(t), sp, "d", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case cur := <-seen:
		if k, ok := dye.FromRequest(cur.MessageType, cur.Status); !ok || k != "k1" {
			t.Errorf("call made with the interceptor's dye.WithKey(ctx, \"k1\"): server saw dyed=%v key=%q "+
				"(message type %#x), want dyed with \"k1\"", ok, k, cur.MessageType)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the call within 5s")
	}
}
