package communicator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/cookie"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tracekey"
)

// TestCarriedFromInterceptorCtx: dye.WithKey, cookie.WithCookies and tracekey.WithTraceID each
// return "a context whose calls" are dyed, carry cookies, are traced; and a client interceptor
// may hand next a derived ctx ("the ctx handed to next gives the call its values"). A call made
// with such a ctx carries each on the wire. Before, the call went undyed (the dyeing was decided
// from the caller's ctx before the interceptors ran); once that was fixed, cookies and the trace
// handed on so were still dropped (found by a review: the server saw status map[] and no trace).
func TestCarriedFromInterceptorCtx(t *testing.T) {
	for _, tc := range []struct {
		name  string
		with  func(context.Context) context.Context
		check func(cur *server.Current) (ok bool, want string)
	}{
		{"dye", func(ctx context.Context) context.Context { return dye.WithKey(ctx, "k1") },
			func(cur *server.Current) (bool, string) {
				k, ok := dye.FromRequest(cur.MessageType, cur.Status)
				return ok && k == "k1", `dyed with "k1"`
			}},
		{"cookies", func(ctx context.Context) context.Context {
			return cookie.WithCookies(ctx, map[string]string{"uid": "42"})
		}, func(cur *server.Current) (bool, string) { return cur.Status["uid"] == "42", "the cookie uid=42" }},
		{"trace", func(ctx context.Context) context.Context { return tracekey.WithTraceID(ctx, "trace-77") },
			func(cur *server.Current) (bool, string) {
				id, ok := tracekey.FromRequest(cur.MessageType, cur.Status)
				return ok && id == "trace-77" && strings.HasPrefix(cur.Status[tracekey.StatusKey], "trace-77|"),
					`traced with "trace-77|<span>"`
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan *server.Current, 4)
			g := startGreeter(t, "a", serverOpt{seen: seen})
			icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
				return next(tc.with(ctx), info)
			}
			comm := newCommWith(t, nil, communicator.WithInterceptor(icpt))
			sp := proxyTo(t, comm, g)
			if _, err := sayHello(testCtx(t), sp, tc.name, 1); err != nil {
				t.Fatal(err)
			}
			select {
			case cur := <-seen:
				if ok, want := tc.check(cur); !ok {
					t.Errorf("call made with what the interceptor put in the ctx it handed on: server saw "+
						"message type %#x, status %v; want %s", cur.MessageType, cur.Status, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the server did not see the call within 5s")
			}
		})
	}
}
