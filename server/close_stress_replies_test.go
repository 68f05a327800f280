package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// stressPattern fills a body of n bytes (n >= 12) for connection tag, packet seq: a header
// (tag, seq, n) and bytes that depend on all three, so that a body written into a buffer another
// connection's reply or push shares, or bytes out of place, show.
func stressPattern(b []byte, tag, seq uint32, n int) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, tag)
	b = binary.BigEndian.AppendUint32(b, seq)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	blk := stressBlock(byte(tag*31 + seq*7))
	for i := 12; i < n; {
		c := min(n-i, 256-i%256)
		b = append(b, blk[i%256:i%256+c]...)
		i += c
	}
	_ = start
	return b
}

// stressBlock returns the 256 bytes k+byte(i).
func stressBlock(k byte) []byte {
	blk := make([]byte, 256)
	for i := range blk {
		blk[i] = k + byte(i)
	}
	return blk
}

// stressCheck checks a body made by stressPattern for tag.
func stressCheck(body []byte, tag uint32) error {
	if len(body) < 12 {
		return fmt.Errorf("body of %d bytes", len(body))
	}
	if got := binary.BigEndian.Uint32(body); got != tag {
		return fmt.Errorf("body of %d bytes carries tag %d, want %d", len(body), got, tag)
	}
	seq, n := binary.BigEndian.Uint32(body[4:]), int(binary.BigEndian.Uint32(body[8:]))
	if n != len(body) {
		return fmt.Errorf("body of %d bytes says %d", len(body), n)
	}
	blk := stressBlock(byte(tag*31 + seq*7))
	for i := 12; i < n; {
		c := min(n-i, 256-i%256)
		if !bytes.Equal(body[i:i+c], blk[i%256:i%256+c]) {
			for j := i; j < i+c; j++ {
				if body[j] != blk[j%256] {
					return fmt.Errorf("body %d of %d bytes differs at %d: %d, want %d", seq, n, j, body[j], blk[j%256])
				}
			}
		}
		i += c
	}
	return nil
}

// TestCloseStressRepliesIntact: many connections with worker replies (small to
// megabytes, the bigwrite path included) and pushes (some refused for the backlog, some over
// max-packet-size), closed at random moments by their clients (FIN or reset), by the idle rule
// and by the backlog cap, under -race. Every reply and push a client receives must carry its own
// connection's pattern, whole: a reply buffer given back to bufpool while still used (or given
// back twice) would carry another connection's bytes. Before, it failed 2 of 26 inline runs: a
// flush whose write failed (OnClose ran inside it) gave one buffer back twice, and two
// connections' pushes were encoded into the same memory.
func TestCloseStressRepliesIntact(t *testing.T) {
	for _, m := range []struct {
		name string
		opts []Option
	}{
		{name: "workers", opts: []Option{WithWorkers(4)}},
		{name: "inline", opts: []Option{WithWorkers(0)}},
	} {
		t.Run(m.name, func(t *testing.T) { closeStress(t, m.opts) })
	}
}

func closeStress(t *testing.T, extra []Option) {
	leakCheck(t)
	const (
		maxPacket  = 2 << 20
		maxBacklog = 1 << 20
		span       = 6 * time.Second
		clients    = 16
	)
	stop := make(chan struct{})
	var pushers sync.WaitGroup
	var startMu sync.Mutex
	stopped := false
	var (
		pushed, refused, oversize atomic.Int64
		corrupt                   atomic.Int64
		firstBad                  atomic.Value
	)
	bad := func(err error) {
		if corrupt.Add(1) == 1 {
			firstBad.Store(err)
		}
	}
	pusher := func(p *Pusher, tag uint32) {
		defer pushers.Done()
		r := rand.New(rand.NewPCG(uint64(tag), 7))
		var buf []byte
		for seq := uint32(1); ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			switch x := r.IntN(100); {
			case x < 5:
				n = maxPacket + 1 // refused: its encoding is left in the connection's out
			case x < 15:
				n = 150<<10 + r.IntN(200<<10)
			case x < 60:
				n = 20<<10 + r.IntN(40<<10)
			default:
				n = 12 + r.IntN(2000)
			}
			buf = stressPattern(buf[:0], tag, seq, n)
			err := p.Push("Feed", buf)
			switch {
			case err == nil:
				pushed.Add(1)
			case errors.Is(err, ErrConnClosed):
				return
			case errors.Is(err, ErrPushBacklog):
				refused.Add(1)
				if r.IntN(2) == 0 {
					time.Sleep(time.Duration(r.IntN(500)) * time.Microsecond)
				}
			default:
				oversize.Add(1)
			}
			if r.IntN(4) == 0 {
				time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
			}
		}
	}
	opts := append([]Option{WithMaxPacketSize(maxPacket), WithMaxBacklog(maxBacklog), WithNumEventLoop(2),
		WithIdleTimeout(400 * time.Millisecond), WithBacklog(0, 0)}, extra...)
	s, addr := startServer(t, func(s *Server) {
		mustHandle(t, s, tarsServant, "sub", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
			tag := binary.BigEndian.Uint32(req)
			startMu.Lock()
			if !stopped {
				pushers.Add(1)
				go pusher(cur.Pusher(), tag)
			}
			startMu.Unlock()
			return stressPattern(rsp, tag, 0, 12), nil
		})
		mustHandle(t, s, tarsServant, "get", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			tag, seq, n := binary.BigEndian.Uint32(req), binary.BigEndian.Uint32(req[4:]), int(binary.BigEndian.Uint32(req[8:]))
			return stressPattern(rsp, tag, seq, n), nil
		})
	}, opts...)
	var nextTag atomic.Uint32
	var frames, conns atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(span)
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 11))
			for time.Now().Before(deadline) {
				stressConn(t, addr, nextTag.Add(1), r, bad, &frames)
				conns.Add(1)
			}
		}()
	}
	wg.Wait()
	startMu.Lock()
	stopped = true // no pusher starts after this: pushers.Wait below
	startMu.Unlock()
	close(stop)
	pushers.Wait()
	st := s.LimitStats()
	t.Logf("%d connections, %d frames checked; pushes %d taken, %d refused, %d oversize; closed idle %d, backlog %d; bigwrites %d",
		conns.Load(), frames.Load(), pushed.Load(), refused.Load(), oversize.Load(), st.Idle, st.Backlog, s.bigStarted.Load())
	if n := corrupt.Load(); n > 0 {
		t.Errorf("%d replies or pushes arrived corrupted; the first: %v", n, firstBad.Load())
	}
}

// stressConn runs one client connection: it subscribes, calls, reads (or not), and closes
// at a random moment.
func stressConn(t *testing.T, addr string, tag uint32, r *rand.Rand, bad func(error), frames *atomic.Int64) {
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		bad(fmt.Errorf("dial: %w", err))
		return
	}
	defer nc.Close()
	life := time.Duration(50+r.IntN(800)) * time.Millisecond
	end := time.Now().Add(life)
	_ = nc.SetDeadline(end)
	kind := r.IntN(4) // 0: reads all; 1: reads in bursts; 2: reads nothing; 3: idle after subscribing
	var reqs []byte
	var tb [4]byte
	binary.BigEndian.PutUint32(tb[:], tag)
	reqs = codec.AppendRequest(reqs, request(1, tarsServant, "sub", tb[:]))
	if _, err := nc.Write(reqs); err != nil {
		return
	}
	done := make(chan struct{})
	cr := rand.New(rand.NewPCG(r.Uint64(), 3))
	if kind != 3 {
		go func() { // calls
			r := cr
			defer close(done)
			for id := int32(2); time.Now().Before(end); id++ {
				n := 12 + r.IntN(4000)
				if r.IntN(10) == 0 {
					n = 1<<20 + r.IntN(600<<10) // a large reply: taken from the scratch, bigwrite when the socket is full
				}
				var b [12]byte
				binary.BigEndian.PutUint32(b[:], tag)
				binary.BigEndian.PutUint32(b[4:], uint32(id))
				binary.BigEndian.PutUint32(b[8:], uint32(n))
				if _, err := nc.Write(codec.AppendRequest(nil, request(id, tarsServant, "get", b[:]))); err != nil {
					return
				}
				time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
			}
		}()
	} else {
		close(done)
	}
	fr := codec.NewFrameReader(nc, 4<<20)
	for time.Now().Before(end) {
		if kind >= 2 {
			time.Sleep(time.Until(end))
			break
		}
		if kind == 1 && r.IntN(20) == 0 {
			time.Sleep(time.Duration(r.IntN(50)) * time.Millisecond)
		}
		f, err := fr.Next()
		if err != nil {
			break // closed: by the server's rules or a reset
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			bad(fmt.Errorf("conn %d: undecodable frame of %d bytes: %v", tag, len(f), err))
			break
		}
		if rsp.Ret != 0 {
			continue // e.g. refused while stopping
		}
		if err := stressCheck(rsp.Buffer, tag); err != nil {
			bad(fmt.Errorf("conn %d, id %d: %v", tag, rsp.RequestID, err))
		}
		frames.Add(1)
	}
	if r.IntN(2) == 0 {
		_ = nc.(*net.TCPConn).SetLinger(0) // a reset
	}
	_ = nc.Close()
	<-done
}
