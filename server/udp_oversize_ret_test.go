package server

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/stats"
)

// TestUDPOversizeReplyRet: over udp a reply that does not fit a datagram is replaced by
// a RetServerEncode (-2) reply (udp.go, appendDatagramReply), so the client gets -2. The server's
// interceptors are promised "Ret ... the reply's TARS return code" (interceptor.ServerInfo) and the
// server's stats count requests "by TARS return code": both see -2 too (Server.handle reckons
// the reply's size before they see the code). Before, both recorded 0 (success): the replacement
// happened after invoke had reported RetOK to them. Inline and worker mode.
func TestUDPOversizeReplyRet(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			var icptRet atomic.Int32
			icptRet.Store(12345)
			s, c := startUDP(t, func(s *Server) {
				mustHandle(t, s, "App.S.Obj", "Big", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, bytes.Repeat([]byte("x"), 70_000)...), nil
				})
			}, WithWorkers(workers), WithStats(), WithInterceptor(
				func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
					err := next(ctx, info)
					icptRet.Store(info.Ret)
					return err
				}))
			rsp := callUDP(t, c, request(1, "App.S.Obj", "Big", nil))
			if rsp.Ret != codec.RetServerEncode {
				t.Fatalf("client got ret %d, want %d (the datagram reply was replaced)", rsp.Ret, codec.RetServerEncode)
			}
			if got := icptRet.Load(); got != codec.RetServerEncode {
				t.Errorf("the interceptor's info.Ret = %d, but the client got %d", got, rsp.Ret)
			}
			codes := map[int32]uint64{}
			var ok uint64
			for _, cs := range s.Stats().Calls {
				if cs.Servant == "App.S.Obj" && cs.Function == "Big" {
					ok += cs.Counters.Results[stats.OK]
					for _, cc := range cs.Counters.Codes {
						codes[cc.Code] += cc.Count
					}
				}
			}
			if codes[codec.RetServerEncode] != 1 {
				t.Errorf("the server's stats count the request as %d ok, error codes %v; but the client got %d", ok, codes, rsp.Ret)
			}
		})
	}
}
