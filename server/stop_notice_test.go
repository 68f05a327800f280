package server

import (
	"context"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/codec"
)

// TestStopNoticeOnlyToTarsConnections: the notice of a Stop (stoppingNotice, a TARS reply) goes
// only to connections whose requests were TARS's: a connection that sent a TUP request gets its
// TUP-shaped refusal and then nothing until Stop closes it, as does one that sent nothing; the
// TARS connection gets the notice once and its held reply. Before, every served connection got
// the notice: TarsNode's client in TUP mode reads every packet as a TUP reply, threw on it in its
// socket's handler, and its process ended (interop's TestTarsNodeTupClientThroughStop; found by a
// review of TarsNode's wire).
func TestStopNoticeOnlyToTarsConnections(t *testing.T) {
	s, h, c, addr := heldServer(t)
	holdFirst(t, h, c)

	tupc := dial(t, addr)
	r := request(7, pbServant, "Held", []byte{0x08, 0x0c}) // an empty UniAttribute
	r.Version = codec.VersionTup
	tupc.write(codec.AppendRequest(nil, r))
	f, err := tupc.readFrame(testTimeout)
	if err != nil {
		t.Fatalf("TUP request: no refusal: %v", err)
	}
	if id, st, err := nodeReadTupReply(f); err != nil || id != 7 || st["STATUS_RESULT_CODE"] != "-1" {
		t.Fatalf("TUP request: refusal id %d status %v (%v), want id 7 and code -1", id, st, err)
	}
	quiet := dial(t, addr)
	eventually(t, "the server to hold the three connections", func() bool { return servedConns(t, s) == 3 })

	stopped := beginStop(t, s)
	close(h.release)
	if rsp := c.recv(); rsp.RequestID != 1 || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "a" {
		t.Fatalf("held reply: id %d ret %d body %q", rsp.RequestID, rsp.Ret, rsp.Buffer)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, cc := range []struct {
		name    string
		c       *client
		notices int
	}{{"the TARS connection", c, 1}, {"the TUP connection", tupc, 0}, {"the connection that sent nothing", quiet, 0}} {
		cc.c.expectClosed() // fails on any frame but the notice, which it counts
		if cc.c.notices != cc.notices {
			t.Errorf("%s got %d notices of the Stop, want %d", cc.name, cc.c.notices, cc.notices)
		}
	}
}

// servedConns counts the connections s's loops hold, each counted on its loop.
func servedConns(t *testing.T, s *Server) int {
	t.Helper()
	s.loopsMu.Lock()
	ls := make([]*loop, 0, len(s.loops))
	for _, l := range s.loops {
		ls = append(ls, l)
	}
	s.loopsMu.Unlock()
	n := 0
	for _, l := range ls {
		got := make(chan int, 1)
		if err := l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			got <- len(l.conns)
			return nil
		})); err != nil {
			t.Fatalf("Execute on a loop: %v", err)
		}
		select {
		case k := <-got:
			n += k
		case <-time.After(testTimeout):
			t.Fatal("a loop did not run a task")
		}
	}
	return n
}
