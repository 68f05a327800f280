package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestPushWire checks the push packet on the wire, in inline and worker mode: request id 0, a
// normal TARS response whose status names the function, the body; pushed during the handler it
// arrives as a whole frame beside the call's reply. A Pusher kept after the call pushes later;
// once the connection closes it fails with ErrConnClosed.
func TestPushWire(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			kept := make(chan *Pusher, 1)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Sub", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
					if err := cur.Push("Now", []byte("n")); err != nil {
						return nil, err
					}
					kept <- cur.Pusher()
					return append(rsp, "ok"...), nil
				})
			}, WithWorkers(workers))
			c := dial(t, addr)
			c.write(codec.AppendRequest(nil, request(7, pbServant, "Sub", nil)))
			got := map[int32]*codec.ResponsePacket{}
			for range 2 {
				r := c.recv()
				got[r.RequestID] = r
			}
			if r := got[7]; r == nil || string(r.Buffer) != "ok" || r.Ret != 0 {
				t.Fatalf("reply to the call: %+v", got[7])
			}
			p := got[codec.PushRequestID]
			if p == nil || p.Status[pushFuncKey] != "Now" || string(p.Buffer) != "n" || p.Ret != 0 || p.PacketType != codec.PacketNormal || p.Version != codec.VersionTars {
				t.Fatalf("push packet: %+v", p)
			}
			pu := <-kept
			if pu.Closed() || pu.RemoteAddr() == nil {
				t.Fatalf("kept Pusher: closed %v, remote %v", pu.Closed(), pu.RemoteAddr())
			}
			if err := pu.Push("Later", []byte("l")); err != nil {
				t.Fatal(err)
			}
			if r := c.recv(); r.RequestID != 0 || r.Status[pushFuncKey] != "Later" || string(r.Buffer) != "l" {
				t.Fatalf("later push: %+v", r)
			}
			_ = c.c.Close()
			for end := time.Now().Add(testTimeout); !pu.Closed() && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			if err := pu.Push("Gone", nil); !errors.Is(err, ErrConnClosed) {
				t.Fatalf("Push after the close: %v, want ErrConnClosed", err)
			}
		})
	}
}
