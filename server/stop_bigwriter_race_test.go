package server

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopBigWriterNoRace: a graceful Stop while a large reply (4 MiB, written by a
// bigwrite.Writer goroutine) is still being taken by a client that reads it only once Stop has
// begun: the reply arrives whole and Stop returns nil, with no report from the race detector
// (`go test -race`, which is what a user's own shutdown tests run). Before, it reported a DATA
// RACE: startBig's Add on a sync.WaitGroup from zero, on the event loop, was not ordered before
// Stop's Wait (the writers are counted by a running now). The race detector may miss one
// occurrence, so the scenario runs five times.
func TestStopBigWriterNoRace(t *testing.T) {
	leakCheck(t)
	for i := range 5 {
		t.Run(fmt.Sprint(i), stopBigWriterOnce)
	}
}

func stopBigWriterOnce(t *testing.T) {
	body := bigBody(4<<20, 9)
	called := make(chan struct{}, 1)
	s := New(WithWorkers(0), WithNumEventLoop(1))
	mustHandle(t, s, pbServant, "Large", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
		called <- struct{}{}
		return append(rsp, body...), nil
	})
	stopOnCleanup(t, s)
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dialSmallRcvBuf(t, a.String())
	c.write(codec.AppendRequest(nil, request(1, pbServant, "Large", nil)))
	select {
	case <-called:
	case <-time.After(testTimeout):
		t.Fatal("handler not called")
	}
	time.Sleep(100 * time.Millisecond) // the reply is handed to its writer (a liveness wait, not an assertion)
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()
	for !s.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // Stop waits for the writer
	rsp := recvLarge(t, c)
	if rsp.RequestID != 1 || !bytes.Equal(rsp.Buffer, body) {
		t.Fatalf("large reply: id %d, %d bytes", rsp.RequestID, len(rsp.Buffer))
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
}
