package server

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// rvLatest records the Pusher of the latest call of a handler.
type rvLatest struct {
	mu sync.Mutex
	p  *Pusher
}

func (l *rvLatest) set(p *Pusher) {
	l.mu.Lock()
	l.p = p
	l.mu.Unlock()
}

func (l *rvLatest) get() *Pusher {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p
}

// closedWithin waits, at most d, for the recorded connection to be closed, and reports whether
// it is.
func (l *rvLatest) closedWithin(d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if p := l.get(); p != nil && p.Closed() {
			return true
		}
	}
	p := l.get()
	return p != nil && p.Closed()
}

// TestIdleNonReaderClosed: with WithIdleTimeout(200ms) a client asks for sixteen
// replies of 900 KiB (14 MiB in all, far below WithBacklog's 100 MiB) and then does nothing at
// all: it sends no byte and reads no byte, and most of the replies stay in the server (gnet's
// outbound buffer). Nothing moves on the connection in either direction for 25 idle timeouts; a
// demanding user expects the idle timeout to close it (and free the megabytes it pins), as
// TarsCpp's TC_EpollServer does: a connection's timeout is refreshed only by a read or write
// event or a send that went out (NetThread::processNet, processPipe), never by bytes merely
// waiting, so a stalled connection times out. Before, it was never closed: check (limits.go)
// counted any unsent byte as work in flight and restarted the idle clock at every sweep, and only
// WithBacklog's rule (above 100 MiB) or WithMaxBacklog (256 MiB) ever close a connection that
// does not read. Any number of clients may thus each pin up to 100 MiB of server memory for
// good, with the idle timeout on. Now (limits.go's check) only bytes that moved count: the
// connection is closed as idle.
func TestIdleNonReaderClosed(t *testing.T) {
	leakCheck(t)
	body := bigBody(900<<10, 5) // below bigwrite.Min: the replies go through gnet's outbound buffer
	var last rvLatest
	called := make(chan struct{}, 16)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Large", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			last.set(cur.Pusher())
			called <- struct{}{}
			return append(rsp, body...), nil
		})
	}, WithWorkers(0), WithIdleTimeout(200*time.Millisecond))
	c := dialSmallRcvBuf(t, addr)
	for i := range 16 { // one request per read: each reply goes to gnet's buffer, none to a writer
		c.write(codec.AppendRequest(nil, request(int32(i+1), pbServant, "Large", nil)))
		select {
		case <-called:
		case <-time.After(testTimeout):
			t.Fatalf("handler not called for request %d", i+1)
		}
	}
	if !last.closedWithin(5 * time.Second) {
		t.Fatalf("a connection on which no byte moved either way for 5 s (25 idle timeouts of 200 ms) "+
			"is still open (LimitStats().Idle = %d); want it closed by the idle timeout", s.LimitStats().Idle)
	}
	if got := s.LimitStats().Idle; got != 1 {
		t.Fatalf("LimitStats().Idle = %d, want 1", got)
	}
}

// TestIdlePushSubscriptionKept: a client subscribes (one call), then only reads the
// pushes the server sends it every 50 ms, with WithIdleTimeout(300ms). The connection carries
// traffic all the time; a push subscription must not be cut by the idle timeout while the
// server pushes to it and the client takes the pushes, as in TarsCpp (whose push is
// Current::sendPushResponse, and whose connection timeout is refreshed by every send that went
// out: NetThread::processPipe calls _list.refresh after cPtr->send). Before, the idle rule looked
// only at received bytes (OnTraffic sets lim.active): the subscription was closed after about
// one idle timeout, and Push failed with ErrConnClosed. Now reply bytes sent count as traffic.
func TestIdlePushSubscriptionKept(t *testing.T) {
	leakCheck(t)
	var last rvLatest
	_, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Subscribe", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			last.set(cur.Pusher())
			return append(rsp, "ok"...), nil
		})
	}, WithWorkers(0), WithIdleTimeout(300*time.Millisecond))
	c := dial(t, addr)
	if rsp := c.call(request(1, pbServant, "Subscribe", nil)); rsp.Ret != codec.RetOK {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := last.get()

	stop := make(chan struct{})
	pushErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the server's publisher
		defer wg.Done()
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				pushErr <- nil
				return
			case <-tk.C:
			}
			if err := p.Push("Tick", []byte{byte(i)}); err != nil {
				pushErr <- err
				return
			}
		}
	}()
	t.Cleanup(func() { wg.Wait() })
	defer close(stop)

	const span = 1500 * time.Millisecond // five idle timeouts
	got := 0
	for end := time.Now().Add(span); time.Now().Before(end); {
		f, err := c.readFrame(testTimeout)
		if err != nil {
			var perr error
			select {
			case perr = <-pushErr:
			case <-time.After(time.Second):
			}
			t.Fatalf("after %d pushes read in time: %v (Push: %v); want a push subscription that receives a "+
				"push every 50 ms kept open over five idle timeouts of 300 ms", got, err, perr)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			t.Fatal(err)
		}
		if rsp.RequestID != codec.PushRequestID {
			t.Fatalf("unexpected frame: id %d", rsp.RequestID)
		}
		got++
	}
	if p.Closed() {
		t.Fatalf("the subscription's connection closed after %d pushes", got)
	}
}

// TestIdlePartialFrameClosed guards that a client that sends the first
// bytes of a frame (its length and a few bytes of the packet) and goes silent is closed by the
// idle timeout, in both modes, and that a large announced frame (reserving WithFrameBudget)
// does not keep it open either.
func TestIdlePartialFrameClosed(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			s, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
				append([]Option{WithIdleTimeout(200 * time.Millisecond)}, m.opts...)...)
			small := dial(t, addr)
			frame := codec.AppendRequest(nil, request(1, pbServant, "Echo", []byte("hello")))
			small.write(frame[:len(frame)/2])
			large := dial(t, addr)
			head := make([]byte, 4, 64)
			binary.BigEndian.PutUint32(head, 8<<20)
			large.write(append(head, 0x10, 0x01))
			small.expectClosed()
			large.expectClosed()
			if got := s.LimitStats().Idle; got != 2 {
				t.Fatalf("LimitStats().Idle = %d, want 2", got)
			}
		})
	}
}
