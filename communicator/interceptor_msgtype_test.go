package communicator_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestInterceptorSeesHashBit: CallInfo.MessageType's doc says it "holds the request's
// iMessageType bits" (and a dyed call's bit is there before the interceptors run: dye.Apply in
// viaHooks), but a call made WithHash carries MessageHash (0x01) on the wire while the
// interceptors read MessageType without it: prepare (servantproxy/servantproxy.go) ORs the bit
// in after the chain ran. An interceptor that records or routes on the message type (a tracer's
// attribute, a policy for hashed calls) sees a hashed call as an unhashed one; the server's
// interceptors, reading the same field, see the bit. Expected: the bit the request carries.
//
// viaHooks now sets the hash and set bits (and the set entry) before the chain; before, the interceptor read 0.
func TestInterceptorSeesHashBit(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	var clientMT atomic.Int32
	clientMT.Store(-1)
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		clientMT.Store(info.MessageType)
		return next(ctx, info)
	}
	comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
	sp := proxyTo(t, comm, g)
	if _, err := sayHello(testCtx(t), sp, "h", 1, servantproxy.WithHash(42)); err != nil {
		t.Fatal(err)
	}
	serverMT := (<-seen).MessageType
	if serverMT&codec.MessageHash == 0 {
		t.Fatalf("set-up: the server saw message type %#x without the hash bit", serverMT)
	}
	if got := clientMT.Load(); got&codec.MessageHash == 0 {
		t.Errorf("WithHash call: the client interceptor saw CallInfo.MessageType %#x, the request carried %#x: the hash bit (%#x) is missing from \"the request's iMessageType bits\"", got, serverMT, codec.MessageHash)
	}
}
