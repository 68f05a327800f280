package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// largeSpareConn brings a connection to a spare reply buffer of over 2 MiB: a client that
// read nothing until a push was refused, an oversized push (its encoding left in cs.out), the
// client reading everything, and a push refused on the stale count (the recount's flush makes
// the emptied out the spare, unparked).
func largeSpareConn(t *testing.T, extra []Option) (*conn, *Pusher, *client) {
	const maxPacket = 2 << 20
	const maxBacklog = 1 << 20
	opts := append([]Option{WithMaxBacklog(maxBacklog), WithMaxPacketSize(maxPacket), WithNumEventLoop(1),
		WithBacklog(0, 0)}, extra...)
	s, addr, subscribed, _ := pushBacklogServer(t, false, opts...)
	c := pushBacklogDial(t, addr, nil)
	if rsp := c.call(request(1, tarsServant, "subscribe", nil)); rsp.Ret != 0 {
		t.Fatalf("subscribe: ret %d", rsp.Ret)
	}
	p := <-subscribed
	cs := p.cs

	// 1. A client that reads nothing: paced pushes until refused, so that seen > 0.
	accepted := pushFill(t, p)
	// 2. A push over max-packet-size: refused, its encoding left in cs.out (emptied).
	if err := p.Push("Big", make([]byte, maxPacket)); err == nil || !strings.Contains(err.Error(), "max-packet-size") {
		t.Fatalf("oversized push after %d pushes (seen %d): %v; limits %+v", accepted, cs.seen.Load(), err, s.LimitStats())
	}
	// 3. The client reads everything: the socket is empty, seen is stale.
	for i := range accepted {
		if _, err := c.readFrame(largeTimeout); err != nil {
			t.Fatalf("frame %d of %d: %v", i, accepted, err)
		}
	}
	seen := int(cs.seen.Load())
	if seen <= 0 {
		t.Fatalf("seen %d after the refusal, want > 0", seen)
	}
	// 4. A push refused on the stale count: the loop counts again in flush's empty branch, which
	// makes the emptied out, a large buffer, the spare.
	if err := p.Push("Feed", make([]byte, maxBacklog-seen+1)); !errors.Is(err, ErrPushBacklog) {
		t.Fatalf("push over the stale count: %v, want ErrPushBacklog", err)
	}
	eventually(t, "the loop counted again", func() bool { return cs.seen.Load() == 0 })
	return cs, p, c
}

// TestIdleConnSpareParkedAfterRecount: after the recount a refused push asks for (flush's empty
// branch), the connection's spare is parked: an idle connection whose client read everything
// keeps no buffer of max-packet-size (2 MiB here, 10 MiB by default). Before, the spare was the
// emptied out as it was (an oversized push's encoding), 2 MiB.
func TestIdleConnSpareParkedAfterRecount(t *testing.T) {
	leakCheck(t)
	cs, _, _ := largeSpareConn(t, []Option{WithWorkers(2)})
	time.Sleep(200 * time.Millisecond) // idle
	got := make(chan [2]int, 1)
	if err := cs.loop.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		cs.mu.Lock()
		out := cap(cs.out.b)
		cs.mu.Unlock()
		got <- [2]int{cap(cs.spare.b), out}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	g := <-got
	if g[0] > maxIdleReplies || g[1] > maxIdleReplies {
		t.Errorf("an idle connection whose client read everything holds a spare of %d KiB and an out of %d KiB "+
			"(want at most %d KiB each)", g[0]>>10, g[1]>>10, maxIdleReplies>>10)
	}
}
