package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestPushAfterStop guards (nobody tested it): a Pusher kept past a Stop that returned nil
// reports Closed and fails with ErrConnClosed, inline and with workers.
func TestPushAfterStop(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			leakCheck(t)
			kept := make(chan *Pusher, 1)
			s := New(WithWorkers(workers))
			mustHandle(t, s, pbServant, "Sub", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
				kept <- cur.Pusher()
				return rsp, nil
			})
			stopOnCleanup(t, s)
			a, err := s.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, a.String())
			c.call(request(1, pbServant, "Sub", nil))
			p := <-kept
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if !p.Closed() {
				t.Errorf("Pusher.Closed() false after Stop returned")
			}
			if err := p.Push("X", []byte("x")); !errors.Is(err, ErrConnClosed) {
				t.Errorf("Push after Stop: %v, want ErrConnClosed", err)
			}
		})
	}
}

// TestUDPWorkersStopDrains guards (nobody tested it): a udp server with workers, stopped while a
// handler runs, answers a datagram arriving during Stop with -9, then delivers the reply in
// flight, and Stop returns nil.
func TestUDPWorkersStopDrains(t *testing.T) {
	leakCheck(t)
	b := newBlocker()
	s := New(WithWorkers(2))
	mustHandle(t, s, pbServant, "Block", b.handle)
	mustHandle(t, s, pbServant, "Echo", echo)
	stopOnCleanup(t, s)
	a, err := s.Start("udp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	uc, err := net.DialUDP("udp", nil, a.(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	sendDatagram(t, uc, codec.AppendRequest(nil, request(1, pbServant, "Block", []byte("a"))))
	b.waitStarted(t)
	stopped := beginStop(t, s)
	sendDatagram(t, uc, codec.AppendRequest(nil, request(2, pbServant, "Echo", []byte("b"))))
	r, err := recvDatagram(uc, testTimeout)
	if err != nil || r.RequestID != 2 || r.Ret != codec.RetOverload {
		t.Fatalf("during stop: %+v %v", r, err)
	}
	close(b.release)
	r, err = recvDatagram(uc, testTimeout)
	if err != nil || r.RequestID != 1 || r.Ret != 0 || string(r.Buffer) != "a" {
		t.Fatalf("in-flight reply: %+v %v", r, err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}
