package server

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interceptor"
)

// TestNilErrorAnswered: a handler that returns a nil *Error as its error (a typed nil, which is
// not a nil error) is answered RetUnknown with a description saying so, and an interceptor
// around it sees that code after next returns. Before, the server's own e.Code panicked (the
// client got "handler panicked: nil pointer dereference"), and with interceptors RetOf panicked
// inside the chain, so an outer interceptor's code after next never ran.
func TestNilErrorAnswered(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			seen, icpt := retSeen()
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Nil", func(context.Context, *Current, []byte, []byte) ([]byte, error) {
					var e *Error
					return nil, e
				})
			}, append(m.opts, WithInterceptor(icpt))...)
			rsp := dial(t, addr).call(request(1, pbServant, "Nil", nil))
			if rsp.Ret != codec.RetUnknown || rsp.ResultDesc != nilErrorDesc {
				t.Fatalf("reply: ret %d desc %q; want %d %q", rsp.Ret, rsp.ResultDesc, codec.RetUnknown, nilErrorDesc)
			}
			if ret := <-seen; ret != codec.RetUnknown {
				t.Fatalf("the interceptor saw ret %d after next; want %d", ret, codec.RetUnknown)
			}
		})
	}
}

// retSeen returns a server interceptor that sends, on the channel it returns too, the return code
// each request ends with (info.Ret after next).
func retSeen() (chan int32, interceptor.Server) {
	seen := make(chan int32, 1)
	return seen, func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
		err := next(ctx, info)
		seen <- info.Ret
		return err
	}
}
