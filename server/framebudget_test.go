package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// sized returns an encoded request for Sum whose frame is exactly n bytes long, its body a
// slice of pattern (at least n bytes), and the body's place in the frame.
func sized(t *testing.T, n int, pattern []byte) (frame []byte, at, length int) {
	t.Helper()
	probe := len(codec.AppendRequest(nil, request(1, pbServant, "Sum", pattern[:n/2])))
	length = n - (probe - n/2)
	frame = codec.AppendRequest(nil, request(1, pbServant, "Sum", pattern[:length]))
	at = bytes.Index(frame, pattern[:64])
	if len(frame) != n || at < 0 {
		t.Fatalf("a request frame of %d bytes, want %d", len(frame), n)
	}
	return frame, at, length
}

// TestFrameBudget: headers that claim large requests and stall, on many connections, reserve
// at most WithFrameBudget; those beyond it are received into growing buffers (counted in
// LimitStats.Grown) while another client's 2 MiB request is served; once the stalled clients
// send the rest of their requests, every one is answered with the checksum of its body.
func TestFrameBudget(t *testing.T) {
	leakCheck(t)
	const (
		budget  = 1 << 20
		bigs    = 20      // stalled requests larger than the budget
		bigLen  = 8 << 20 // the maximum packet size
		mids    = 5       // stalled requests of which 3 fit in the budget
		midLen  = 300 << 10
		started = 100 + codec.HeaderLen
	)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, pbServant, "Sum", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			sum := sha256.Sum256(req)
			return append(rsp, sum[:]...), nil
		})
	}, WithFrameBudget(budget), WithMaxPacketSize(bigLen), WithNumEventLoop(2))

	// The server's reservation never passes the budget, sampled until the test ends.
	var most atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if r := s.budget.Reserved(); r > most.Load() {
				most.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	// Each stalled client sends the first bytes of one of two requests, the first byte of its
	// body changed to its number, then stalls.
	pattern := bigBody(bigLen, 0)
	type stalled struct {
		c             *client
		frame         []byte // shared by the clients of a size: the rest is sent from it
		at, length, i int    // the body's place in frame; the client's number
	}
	var all []stalled
	big, at, length := sized(t, bigLen, pattern)
	mid, atMid, lengthMid := sized(t, midLen, pattern)
	if max(at, atMid) >= started {
		t.Fatalf("bodies at %d and %d: past the first %d bytes", at, atMid, started)
	}
	for i := range bigs + mids {
		st := stalled{dial(t, addr), big, at, length, i}
		if i >= bigs {
			st.frame, st.at, st.length = mid, atMid, lengthMid
		}
		head := slices.Clone(st.frame[:started])
		head[st.at] = byte(i)
		st.c.write(head)
		all = append(all, st)
		if i == bigs-1 {
			eventually(t, "the large stalled requests counted as grown", func() bool { return s.LimitStats().Grown == bigs })
		}
	}
	eventually(t, "3 of the smaller stalled requests reserved, 2 grown", func() bool {
		return s.budget.Reserved() == 3*midLen && s.LimitStats().Grown == bigs+2
	})

	// Another client's 2 MiB request is served meanwhile.
	c := dial(t, addr)
	body := bigBody(2<<20, 0x5a)
	rsp := c.call(request(100, pbServant, "Sum", body))
	if want := sha256.Sum256(body); rsp.Ret != codec.RetOK || string(rsp.Buffer) != string(want[:]) {
		t.Fatalf("the 2 MiB request: ret %d, checksum %x", rsp.Ret, rsp.Buffer)
	}

	// The stalled clients finish their requests: each is answered, growing or not.
	for _, st := range all {
		st.c.write(st.frame[started:])
	}
	for _, st := range all {
		rsp := st.c.recv()
		h := sha256.New()
		h.Write([]byte{byte(st.i)})
		h.Write(st.frame[st.at+1 : st.at+st.length])
		if rsp.RequestID != 1 || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, h.Sum(nil)) {
			t.Fatalf("stalled request %d: id %d ret %d checksum %x", st.i, rsp.RequestID, rsp.Ret, rsp.Buffer)
		}
	}
	if r := s.budget.Reserved(); r != 0 {
		t.Fatalf("%d bytes reserved after every request was answered", r)
	}
	if m := most.Load(); m > budget {
		t.Fatalf("the server reserved %d bytes, over the budget of %d", m, budget)
	}
}
