package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopDuringChurn guards Stop while 16 clients keep opening
// connections, sending a request to a slow (worker) handler and closing, some half-closing
// instead, some closing at once: Stop returns nil, every reply a client got is a whole answer
// (its request's or -9 "server is stopping"), and no goroutine is left.
func TestStopDuringChurn(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			leakCheck(t)
			s := New(append([]Option{WithNumEventLoop(2), WithIdleTimeout(time.Second)}, m.opts...)...)
			mustHandle(t, s, pbServant, "Echo", echo)
			mustHandle(t, s, pbServant, "Slow", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
				if m.name != "inline" {
					time.Sleep(2 * time.Millisecond)
				}
				return append(rsp, req...), nil
			})
			stopOnCleanup(t, s)
			a, err := s.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := a.String()
			var (
				stop    atomic.Bool
				wg      sync.WaitGroup
				bad     atomic.Value
				answers atomic.Int64
			)
			for g := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						c, err := net.DialTimeout("tcp", addr, time.Second)
						if err != nil {
							continue // refused once the listener closed
						}
						_ = c.SetDeadline(time.Now().Add(3 * time.Second))
						req := request(int32(i+1), pbServant, "Slow", []byte("x"))
						if _, err := c.Write(codec.AppendRequest(nil, req)); err != nil {
							_ = c.Close()
							continue
						}
						switch (g + i) % 3 {
						case 0:
							_ = c.Close()
							continue
						case 1:
							_ = c.(*net.TCPConn).CloseWrite()
						}
						fr := codec.NewFrameReader(c, 0)
						f, err := fr.Next()
						if err == nil && bytes.Equal(f, stoppingNotice) {
							f, err = fr.Next() // the reply after the notice of the Stop
						}
						if err == nil {
							var rsp codec.ResponsePacket
							if err := codec.DecodeResponse(f, &rsp); err != nil {
								bad.Store(err)
							} else if rsp.RequestID != req.RequestID ||
								(rsp.Ret == codec.RetOK) != (string(rsp.Buffer) == "x") ||
								(rsp.Ret != codec.RetOK && rsp.Ret != codec.RetOverload) {
								bad.Store(errors.New("bad reply"))
							} else {
								answers.Add(1)
							}
						}
						_ = c.Close()
					}
				}()
			}
			time.Sleep(200 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			stopErr := s.Stop(ctx)
			stop.Store(true)
			wg.Wait()
			if stopErr != nil {
				t.Fatalf("Stop during churn: %v", stopErr)
			}
			if v := bad.Load(); v != nil {
				t.Fatalf("a client got a bad reply: %v", v)
			}
			if answers.Load() == 0 {
				t.Fatal("no call answered before Stop")
			}
		})
	}
}

// TestStopRunsQueuedJobs guards Stop in worker mode with more requests
// queued than workers: the ones already queued when Stop begins are run and answered, those
// arriving after are refused -9, and Stop waits for all.
func TestStopRunsQueuedJobs(t *testing.T) {
	s, h, c, _ := heldServer(t)
	var frames []byte
	for i := range 4 {
		req := request(int32(i+1), pbServant, "Held", []byte{byte('a' + i)})
		req.Timeout = int32(largeTimeout / time.Millisecond) // queued past 3 s under load, they would not run
		frames = codec.AppendRequest(frames, req)
	}
	c.write(frames)
	h.waitStarted(t) // one runs, three wait in the queue
	eventually(t, "four requests handed to the worker queue", func() bool { return s.inflight.Load() == 4 })
	stopped := beginStop(t, s)
	c.write(codec.AppendRequest(nil, request(5, pbServant, "Held", []byte("late"))))
	if rsp := c.recv(); rsp.RequestID != 5 || rsp.Ret != codec.RetOverload {
		t.Fatalf("request after Stop began: id %d ret %d, want 5 refused %d", rsp.RequestID, rsp.Ret, codec.RetOverload)
	}
	close(h.release)
	for i := range 4 {
		rsp := c.recv()
		if rsp.RequestID != int32(i+1) || rsp.Ret != codec.RetOK || string(rsp.Buffer) != string(rune('a'+i)) {
			t.Fatalf("queued reply %d: id %d ret %d body %q", i+1, rsp.RequestID, rsp.Ret, rsp.Buffer)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	c.expectClosed()
}

// beginStop runs s.Stop (bounded by testTimeout) on a goroutine and returns once Stop has
// begun; Stop's result comes on the channel.
func beginStop(t *testing.T, s *Server) <-chan error {
	t.Helper()
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()
	eventually(t, "Stop began", func() bool { return s.stopping.Load() })
	return stopped
}

// holdFirst sends request 1 (Held, body "a", a 60 s timeout: held past whatever the test does
// meanwhile) on c and returns once h holds it.
func holdFirst(t *testing.T, h *blocker, c *client) {
	t.Helper()
	held := request(1, pbServant, "Held", []byte("a"))
	held.Timeout = 60_000
	c.write(codec.AppendRequest(nil, held))
	h.waitStarted(t)
}

// heldServer starts a worker server (one worker, one loop) whose Held handler blocks until h is
// released, and dials it: the set-up of the tests of a Stop held open by a running request.
func heldServer(t *testing.T) (s *Server, h *blocker, c *client, addr string) {
	t.Helper()
	leakCheck(t)
	h = newBlocker()
	s = New(WithWorkers(1), WithNumEventLoop(1))
	mustHandle(t, s, pbServant, "Held", h.handle)
	stopOnCleanup(t, s)
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, h, dial(t, a.String()), a.String()
}
