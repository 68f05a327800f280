package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestPushLimits: a push that would exceed the max packet size is refused with an error naming
// the sizes and nothing is sent (a client with the same limit would close the connection on it);
// the connection goes on carrying pushes and replies. Pushes queued faster than the loop writes
// them (here by an inline handler, which holds the loop) are refused with ErrPushBacklog once
// they exceed the max backlog. Both used to be queued, whatever their size.
func TestPushLimits(t *testing.T) {
	const maxPacket = 4 << 10
	refused := make(chan error, 1)
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Big", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
			if err := cur.Push("Big", make([]byte, maxPacket)); err == nil || !strings.Contains(err.Error(), "max-packet-size") {
				return nil, fmt.Errorf("oversized push: %v, want a max-packet-size error", err)
			}
			if err := cur.Push("Small", []byte("s")); err != nil {
				return nil, err
			}
			return append(rsp, "ok"...), nil
		})
		mustHandle(t, s, pbServant, "Flood", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
			for i := range 1000 {
				if err := cur.Push("Flood", make([]byte, 100)); err != nil {
					refused <- fmt.Errorf("push %d: %w", i, err)
					return nil, nil
				}
			}
			refused <- nil
			return nil, nil
		})
	}, WithMaxPacketSize(maxPacket), WithMaxBacklog(2<<10))
	c := dial(t, addr)
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Big", nil)))
	got := map[int32]*codec.ResponsePacket{}
	for range 2 {
		r := c.recv()
		got[r.RequestID] = r
	}
	if r := got[1]; r == nil || r.Ret != 0 || string(r.Buffer) != "ok" {
		t.Fatalf("reply: %+v", got[1])
	}
	if p := got[codec.PushRequestID]; p == nil || p.Status[pushFuncKey] != "Small" {
		t.Fatalf("the push after the refused one: %+v", p)
	}
	c.write(codec.AppendRequest(nil, request(2, pbServant, "Flood", nil)))
	select {
	case err := <-refused:
		if !errors.Is(err, ErrPushBacklog) {
			t.Fatalf("1000 pushes of 100 bytes from an inline handler, max backlog 2 KiB: %v, want ErrPushBacklog", err)
		}
		t.Log(err)
	case <-time.After(testTimeout):
		t.Fatal("the flooding handler did not finish")
	}
}
