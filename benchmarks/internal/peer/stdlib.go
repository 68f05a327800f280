package peer

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
	"github.com/tarscomm/tarscomm/benchmarks/internal/tarswire"
)

// The stdlib client is the baseline: the least a pipelined TARS client on net.Conn needs.
// One connection per address, shared by every caller; callers append framed requests to the
// connection's output buffer and wake its writer goroutine (once per batch); its reader
// goroutine decodes the replies and hands each to its caller by request id (a caller's id is
// its worker number: one call in flight each). Timeouts use one reusable timer per caller.
// It has no reconnect, no load balancing and no pooling beyond that.
//
// Large messages cost one copy each way in the client: a body of stdlibInlineMax bytes or more
// is not copied into the output buffer but written from the caller's own buffer, between its
// frame's head and tail, in one vectored write (writev) with the rest of the batch; a reply
// is read straight into a buffer that holds whole frames (grown once to the largest), and
// proto.Unmarshal copies its payload out.

var (
	errStdlibTimeout = errors.New("stdlib: call timed out")
	errStdlibClosed  = errors.New("stdlib: connection closed")
)

const stdlibMaxFrame = MaxFrame

// stdlibInlineMax is the body size from which a request's body is written from the caller's
// buffer instead of being copied into the connection's output buffer.
const stdlibInlineMax = 16 << 10

type stdlibClient struct {
	conns     []*stdConn
	servant   string
	timeout   time.Duration
	timeoutMS int32
}

func newStdlibClient(cfg ClientConfig) (Client, error) {
	c := &stdlibClient{servant: cfg.Servant, timeout: cfg.Timeout, timeoutMS: int32(cfg.Timeout / time.Millisecond)}
	for _, a := range cfg.Addrs {
		nc, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			c.Close()
			return nil, err
		}
		sc := &stdConn{
			nc:      nc,
			wake:    make(chan struct{}, 1),
			done:    make(chan struct{}),
			callers: make([]atomic.Pointer[stdCaller], cfg.Concurrency+1),
		}
		go sc.writeLoop()
		go sc.readLoop()
		c.conns = append(c.conns, sc)
	}
	return c, nil
}

func (c *stdlibClient) Close() error {
	for _, sc := range c.conns {
		sc.close()
	}
	return nil
}

func (c *stdlibClient) NewCaller(worker int, payload []byte) Caller {
	sc := c.conns[worker%len(c.conns)]
	id := worker + 1
	if id >= len(sc.callers) {
		panic(fmt.Sprintf("stdlib: caller %d beyond the configured concurrency %d", worker, len(sc.callers)-1))
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	cl := &stdCaller{c: c, sc: sc, id: int32(id), payload: payload, replies: make(chan stdReply, 4), timer: t}
	sc.callers[id].Store(cl)
	return cl
}

type stdConn struct {
	nc      net.Conn
	wake    chan struct{} // capacity 1: a pending wakeup of the writer
	done    chan struct{}
	once    sync.Once
	closed  atomic.Bool
	callers []atomic.Pointer[stdCaller] // by request id

	// What the writer has still to write, in order: segs, then out[mark:]. Small requests are
	// framed whole into out; a large one puts its head in out, then out[mark:] and its body
	// (the caller's buffer) go to segs, and its tail starts the next part of out.
	mu   sync.Mutex
	out  []byte   // guarded by mu
	mark int      // guarded by mu: out[:mark] is in segs
	segs [][]byte // guarded by mu
}

func (sc *stdConn) close() {
	sc.once.Do(func() {
		sc.closed.Store(true)
		close(sc.done)
		sc.nc.Close()
	})
}

// send queues one request and wakes the writer if nothing was queued. A large body is
// written from body itself, which must not change until the reply (or, if none comes, must
// be left to the writer: the caller then drops it).
func (sc *stdConn) send(id int32, servant string, body []byte, timeoutMS int32) error {
	if sc.closed.Load() {
		return errStdlibClosed
	}
	sc.mu.Lock()
	wasEmpty := len(sc.out) == 0 && len(sc.segs) == 0
	if len(body) < stdlibInlineMax {
		sc.out = tarswire.AppendRequest(sc.out, id, servant, Method, body, timeoutMS)
	} else {
		sc.out = tarswire.AppendRequestHead(sc.out, id, servant, Method, len(body), timeoutMS)
		sc.segs = append(sc.segs, sc.out[sc.mark:], body)
		sc.mark = len(sc.out)
		sc.out = tarswire.AppendRequestTail(sc.out, timeoutMS)
	}
	sc.mu.Unlock()
	if wasEmpty {
		select {
		case sc.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// writeLoop writes each batch queued since the last in one write, or one writev if it holds
// large bodies. Two output buffers take turns: callers fill one while the other is written.
func (sc *stdConn) writeLoop() {
	var spare []byte
	var spareSegs, iov [][]byte
	for {
		select {
		case <-sc.wake:
		case <-sc.done:
			return
		}
		sc.mu.Lock()
		buf, mark, segs := sc.out, sc.mark, sc.segs
		sc.out, sc.mark, sc.segs = spare[:0], 0, spareSegs[:0]
		sc.mu.Unlock()
		var err error
		switch {
		case len(segs) > 0:
			iov = append(append(iov[:0], segs...), buf[mark:])
			bufs := net.Buffers(iov)
			_, err = bufs.WriteTo(sc.nc)
			clear(segs) // drop the references to the callers' bodies
		case len(buf) > 0:
			_, err = sc.nc.Write(buf)
		}
		if err != nil {
			sc.close()
			return
		}
		spare, spareSegs = buf, segs
	}
}

func (sc *stdConn) readLoop() {
	defer sc.close()
	buf := make([]byte, 256<<10)
	n := 0
	var rsp echopb.EchoRsp
	var r tarswire.Response
	for {
		m, err := sc.nc.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		off := 0
		for {
			l, err := tarswire.FrameLen(buf[off:n], stdlibMaxFrame)
			if err != nil {
				return
			}
			if l == 0 || off+l > n {
				if l > len(buf) { // a frame larger than the buffer: grow it
					nb := make([]byte, l)
					n = copy(nb, buf[off:n])
					buf, off = nb, 0
				}
				break
			}
			sc.deliver(buf[off:off+l], &r, &rsp)
			off += l
		}
		n = copy(buf, buf[off:n])
	}
}

// deliver decodes one reply and hands its outcome to its caller.
func (sc *stdConn) deliver(frame []byte, r *tarswire.Response, rsp *echopb.EchoRsp) {
	if err := tarswire.DecodeResponse(frame, r); err != nil {
		return
	}
	if r.RequestID <= 0 || int(r.RequestID) >= len(sc.callers) {
		return
	}
	cl := sc.callers[r.RequestID].Load()
	if cl == nil {
		return
	}
	var rep stdReply
	switch {
	case r.Ret != 0:
		rep.err = fmt.Errorf("stdlib: server returned %d: %s", r.Ret, r.Desc)
		rep.seq = cl.seq.Load()
	default:
		if err := proto.Unmarshal(r.Body, rsp); err != nil {
			rep.err = err
			rep.seq = cl.seq.Load()
		} else {
			// Unmarshal gave Data its own array: the caller compares it, off the reader.
			rep.seq, rep.data = rsp.Seq, rsp.Data
		}
	}
	select {
	case cl.replies <- rep:
	default: // the caller has stale replies queued; it will time out
	}
}

type stdReply struct {
	seq  uint64
	data []byte // the echoed payload, if err is nil
	err  error
}

type stdCaller struct {
	c       *stdlibClient
	sc      *stdConn
	id      int32
	payload []byte
	seq     atomic.Uint64 // of the call in flight, for replies that carry no body
	req     echopb.EchoReq
	body    []byte
	replies chan stdReply
	timer   *time.Timer
}

func (cl *stdCaller) Call(seq uint64) error {
	cl.req.Data, cl.req.Seq = cl.payload, seq
	cl.seq.Store(seq)
	body, err := proto.MarshalOptions{}.MarshalAppend(cl.body[:0], &cl.req)
	if err != nil {
		return err
	}
	cl.body = body
	if err := cl.sc.send(cl.id, cl.c.servant, body, cl.c.timeoutMS); err != nil {
		return err
	}
	cl.timer.Reset(cl.c.timeout)
	defer cl.timer.Stop()
	for {
		select {
		case rep := <-cl.replies:
			if rep.seq < seq && rep.err == nil {
				continue // the late reply of a call that timed out
			}
			if rep.err != nil {
				return rep.err
			}
			return check(seq, cl.payload, rep.seq, rep.data)
		case <-cl.timer.C:
			cl.body = nil // the writer may still be writing it
			return errStdlibTimeout
		case <-cl.sc.done:
			cl.body = nil
			return errStdlibClosed
		}
	}
}
