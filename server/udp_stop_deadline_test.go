package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
)

// udpStopCycles runs n times: a UDP server with workers gets one request whose handler
// is still running when the server is stopped with a 50ms deadline (the handler returns when
// Stop, giving up, cancels its ctx). It returns how many descriptors are open beyond the count
// before, once that stops falling (at most 3s), and the address of the last server.
func udpStopCycles(t *testing.T, n int) (grown int, lastAddr string) {
	stolen := 0
	base := fdCount(t)
	for i := range n {
		running := make(chan struct{}, 1)
		s := New(WithLogger(zap.NewNop()), WithNumEventLoop(1), WithWorkers(2))
		mustHandle(t, s, pbServant, "Hold", func(ctx context.Context, _ *Current, _, _ []byte) ([]byte, error) {
			running <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
		a, err := s.Start("udp://127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // not part of the scenario: only so that no goroutine outlives the test
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			_ = s.Stop(ctx)
		})
		lastAddr = a.String()
		c, err := net.DialUDP("udp", nil, a.(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(codec.AppendRequest(nil, request(1, pbServant, "Hold", nil))); err != nil {
			t.Fatal(err)
		}
		reached := true
		select {
		case <-running:
		case <-time.After(time.Second):
			reached = false
			// The fresh port (port 0, bound with SO_REUSEPORT) may be one a leaked socket of an
			// earlier server still holds: the kernel then gives it the datagram, and nobody reads it.
			t.Logf("cycle %d of %d: the request never reached the new server's handler", i, n)
			stolen++
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err = s.Stop(ctx)
		cancel()
		_ = c.Close()
		if reached && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop with a handler still running = %v, want context.DeadlineExceeded", err)
		}
	}
	if stolen > 0 {
		t.Logf("%d of %d requests went to a socket of an earlier server that Stop left open", stolen, n)
	}
	n2 := fdCount(t)
	for deadline := time.Now().Add(3 * time.Second); n2 > base+2 && time.Now().Before(deadline); n2 = fdCount(t) {
		time.Sleep(20 * time.Millisecond)
	}
	return n2 - base, lastAddr
}

// TestUDPStopDeadlineReleasesSocket: a UDP server with workers whose Stop gives up at its
// deadline (a handler still ran) closes its reply socket, a duplicate of the served socket, once
// the handler returns: the descriptors open come back to their count, and the port is free.
// Before (found by the descriptor review), nothing closed the worker queue unless Stop was called
// again, so the workers never exited and the last one never closed the socket: one descriptor
// per server, the port bound, and a new server on that port (SO_REUSEPORT) could lose requests
// to the orphan socket. (TCP servers left their workers behind the same way.)
func TestUDPStopDeadlineReleasesSocket(t *testing.T) {
	small, _ := udpStopCycles(t, 20)
	large, addr := udpStopCycles(t, 200)
	t.Logf("descriptors left open 3s after the Stops: %d after 20 servers, %d after 200", small, large)
	if large-small > 10 {
		t.Errorf("3s after Stop (deadline passed while a handler ran, which then returned) of UDP servers with workers, %d descriptors are still open after 20 servers and %d after 200: the count grows with the servers stopped; want it back to the count before (each server's reply socket closed)", small, large)
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Errorf("the port %s of the last stopped UDP server cannot be bound again: %v; want it free once Stop returned and its handler ended", addr, err)
	} else {
		_ = pc.Close()
	}
}
