package communicator_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestQueuedCallSendsTimeLeft: docs/ARCHITECTURE.md, step 1: "The time left is sent to the
// server as iTimeout; a frame that leaves a millisecond or more after it was encoded [...] has
// its iTimeout rewritten in place to the time left then", so that "a chain of calls gives up
// with its first caller". Here a call waits in its connection's send queue behind a large frame
// the server is not reading yet (its only loop runs an inline handler for 1.5 s): the frame
// leaves at least that long after it was encoded, so the server must be told at most its timeout
// minus that wait. Before, it was told the timeout encoded at call time: Flush wrote queued
// calls without rewriting their iTimeout (only retries, connects and first lists did).
func TestQueuedCallSendsTimeLeft(t *testing.T) {
	const (
		obj   = "Test.Queued.Obj"
		body  = 48 << 20
		block = 1500 * time.Millisecond
		// smallTimeout is Small's: long enough for the 48 MiB queued before it to pass on a busy
		// machine under -race (3 s was not, on one whose page faults are slow).
		smallTimeout = 20 * time.Second
	)
	started := make(chan struct{})
	blockEnded := make(chan time.Time, 1)
	type seen struct {
		timeout int32
		at      time.Time
	}
	got := make(chan seen, 1)
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server")), server.WithNumEventLoop(1),
		server.WithMaxPacketSize(64<<20))
	if err := s.Handle(obj, "Block", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		close(started)
		time.Sleep(block) // inline on the only loop: nothing is read meanwhile
		blockEnded <- time.Now()
		return rsp, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(obj, "Big", func(_ context.Context, _ *server.Current, _, rsp []byte) ([]byte, error) {
		return rsp, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(obj, "Small", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
		got <- seen{cur.Timeout, time.Now()}
		return rsp, nil
	}); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})

	cfg := conf.Default()
	cfg.NetThread = 1
	cfg.MaxPacketSize = 64 << 20
	cfg.SendBufferLimit = 256 << 20
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = comm.Close() })
	_, port, _ := net.SplitHostPort(addr.String())
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(obj+"@tcp -h 127.0.0.1 -p "+port+" -t 60000", &sp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	blockDone := make(chan error, 1)
	if err := sp.AsyncInvokeRaw(ctx, "Block", nil, func(_ []byte, err error) { blockDone <- err },
		servantproxy.WithTimeout(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never ran Block")
	}
	bigDone := make(chan error, 1)
	if err := sp.AsyncInvokeRaw(ctx, "Big", make([]byte, body), func(_ []byte, err error) { bigDone <- err },
		servantproxy.WithTimeout(40*time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // Big is on the socket, in part: the connection waits for it
	encoded := time.Now()
	if _, err := sp.InvokeRaw(ctx, "Small", nil, servantproxy.WithTimeout(smallTimeout)); err != nil {
		t.Fatalf("Small: %v", err)
	}
	for _, ch := range []chan error{blockDone, bigDone} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("Block/Big: %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Fatal("Block or Big never ended")
		}
	}
	ended := <-blockEnded
	s1 := <-got
	waited := ended.Sub(encoded) // Small could not leave before the server read again
	maxLeft := int32((smallTimeout-waited)/time.Millisecond) + 1
	t.Logf("Small encoded, then the server read nothing for %v; it was received after %v, with iTimeout %d ms", waited, s1.at.Sub(encoded), s1.timeout)
	if s1.timeout > maxLeft {
		t.Errorf("the server was told iTimeout %d ms for a call that waited at least %v in its connection's send queue "+
			"(%v timeout): at most %d ms were left when its frame left, which is what it must be told "+
			"(the iTimeout encoded at call time was sent unchanged)", s1.timeout, waited.Round(time.Millisecond), smallTimeout, maxLeft)
	}
}
