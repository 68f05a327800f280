package server

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestPushBeforeReplyOrder: a handler that pushes and then returns made the push first, on the
// same connection, so the client gets the push before the reply (as from TarsCpp, whose
// Current::sendPushResponse goes through the same send queue as the reply), inline and with
// workers. Inline, the reply went out at the end of OnTraffic while the push waited for the
// flush task: the reply arrived first.
func TestPushBeforeReplyOrder(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			leakCheck(t)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Sub", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
					if err := cur.Push("Snapshot", []byte("state")); err != nil {
						return nil, err
					}
					return append(rsp, "subscribed"...), nil
				})
			}, WithWorkers(workers))
			c := dial(t, addr)
			c.write(codec.AppendRequest(nil, request(7, pbServant, "Sub", nil)))
			first := c.recv()
			second := c.recv()
			if first.RequestID != codec.PushRequestID || second.RequestID != 7 {
				t.Fatalf("frames in order: id %d then id %d; want the push (id 0), made first, before the reply (id 7)", first.RequestID, second.RequestID)
			}
		})
	}
}
