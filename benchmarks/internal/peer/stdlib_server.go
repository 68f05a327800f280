package peer

import (
	"errors"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
	"github.com/tarscomm/tarscomm/benchmarks/internal/tarswire"
)

// The stdlib server is the floor on the server side, the counterpart of the stdlib client: the
// least a multiplexed TARS echo server on net.Listener needs, with the standard library and
// protobuf only. One goroutine per connection reads frames into a buffer holding whole frames
// (grown once to the largest), decodes each request (tarswire) and answers it at once:
// proto.Unmarshal into a reused EchoReq, proto.Marshal of the EchoRsp echoing its data and
// seq (the reply every TARS echo server here gives), the reply framed into the connection's
// output buffer. After the frames of each read it wakes the connection's writer goroutine,
// which writes every reply queued since its last write in one write (frameWriter, shared with
// the stdlib client). Unknown servants and functions get TARS's -4 and -3, a body that is not
// an EchoReq -1; one-way requests get no reply.
//
// Requests are handled inline on the reader, not on a goroutine each: the echo never blocks
// and costs about a microsecond, so a goroutine per request (TarsGo's way) would add a
// goroutine start, a scheduler hop and a lock on the reply queue to every call, and would split
// the replies of one read into as many wakeups of the writer. A server whose handlers block
// would need goroutines (or a pool); for this one the per-call cost is the point, and inline
// is the least of it.
//
// Large messages: a reply body of stdlibInlineMax bytes or more is marshalled into a buffer of
// its own and written with writev between its frame's head and tail, never copied into the
// output buffer; the writer hands it back once written, and the server keeps such buffers (up
// to stdlibSpareBytes, shared by its connections, so that a new connection finds them) for the
// next large replies. A large echo thus allocates one payload per call, the data
// proto.Unmarshal copies out of the request, like the stdlib client's reply.
// Memory is bounded by the callers' calls in flight, not by the server: it reads as fast as
// requests come.

// stdlibSpareBytes bounds the large reply bodies the server keeps for reuse.
const stdlibSpareBytes = 128 << 20

// stdlibServer is the floor's echo server.
type stdlibServer struct {
	ln     net.Listener
	wg     sync.WaitGroup // the accept loop and every connection's goroutines
	spares bodySpares     // large reply bodies written, for reuse

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // guarded by mu
	closed bool                  // guarded by mu
}

func startStdlibServer(addr string, _ ServerConfig) (Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &stdlibServer{ln: ln, conns: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *stdlibServer) Addr() string { return s.ln.Addr().String() }

// Stop closes the listener and every connection, and waits for their goroutines.
func (s *stdlibServer) Stop() {
	s.mu.Lock()
	s.closed = true
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *stdlibServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // out of file descriptors and the like: wait for some to close
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(nc)
	}
}

// serve runs one connection: its writer on a goroutine of its own, its reader here, until
// either fails or the server stops.
func (s *stdlibServer) serve(nc net.Conn) {
	defer s.wg.Done()
	c := &stdSrvConn{w: newFrameWriter(nc), spares: &s.spares}
	done := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if c.w.run(done, c.spares.put) != nil {
			nc.Close() // the reader's next read fails
		}
	}()
	_ = readFrames(nc, MaxFrame, c.handle, c.flush)
	close(done)
	nc.Close() // unblocks a writer stuck on a full socket
	<-wrote
	s.mu.Lock()
	delete(s.conns, nc)
	s.mu.Unlock()
}

// stdSrvConn is the reader's state for one connection: everything is reused from call to call.
type stdSrvConn struct {
	w      *frameWriter
	queued bool // replies were queued since the last flush
	req    tarswire.Request
	in     echopb.EchoReq
	out    echopb.EchoRsp
	small  []byte      // the body of a small reply, before it is framed
	spares *bodySpares // the server's
}

// TARS return codes the server answers with.
const (
	retServerDecode = -1
	retNoFunc       = -3
	retNoServant    = -4
)

// handle answers one request frame. It fails (and the connection closes) only on a frame that
// is not a TARS request.
func (c *stdSrvConn) handle(frame []byte) error {
	if err := tarswire.DecodeRequest(frame, &c.req); err != nil {
		return err
	}
	var ret int32
	var desc string
	var body []byte
	large := false
	switch {
	case string(c.req.Servant) != Servant:
		ret, desc = retNoServant, "no servant "+string(c.req.Servant)
	case string(c.req.Func) != Method:
		ret, desc = retNoFunc, "no function "+string(c.req.Func)
	default:
		if err := proto.Unmarshal(c.req.Body, &c.in); err != nil {
			ret, desc = retServerDecode, err.Error()
			break
		}
		c.out.Data, c.out.Seq = c.in.Data, c.in.Seq
		large = len(c.req.Body) >= stdlibInlineMax
		buf := c.small[:0]
		if large {
			buf = c.spares.get(len(c.req.Body))
		}
		body, _ = proto.MarshalOptions{}.MarshalAppend(buf, &c.out) // cannot fail: the fields were just decoded
		c.out.Data, c.in.Data = nil, nil
		if !large {
			c.small = body
		}
	}
	if c.req.PacketType == tarswire.PacketOneway {
		if large {
			c.spares.put(body)
		}
		return nil
	}
	out := c.w.begin()
	if large {
		out = tarswire.AppendResponseHead(out, &c.req, 0, len(body), "")
		out = c.w.attach(out, body)
		out = tarswire.AppendResponseTail(out, "")
	} else {
		out = tarswire.AppendResponse(out, &c.req, ret, body, desc)
	}
	c.w.end(out)
	c.queued = true
	return nil
}

// flush wakes the writer after the frames of one read, if they queued replies.
func (c *stdSrvConn) flush() {
	if c.queued {
		c.queued = false
		c.w.signal()
	}
}

// bodySpares keeps buffers of large reply bodies once written, up to stdlibSpareBytes: the
// writer puts them back, the reader takes them for the next large replies.
type bodySpares struct {
	mu    sync.Mutex
	free  [][]byte // guarded by mu
	bytes int      // guarded by mu: the capacity of free's buffers
}

// get returns an empty buffer to marshal a body of about n bytes into: a spare one, or nil
// (the marshal allocates).
func (p *bodySpares) get(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.free) > 0 {
		b := p.free[len(p.free)-1]
		p.free[len(p.free)-1] = nil
		p.free = p.free[:len(p.free)-1]
		p.bytes -= cap(b)
		if cap(b) >= n {
			return b[:0]
		}
	}
	return nil
}

// put keeps b for a later get, if there is room.
func (p *bodySpares) put(b []byte) {
	if cap(b) < stdlibInlineMax {
		return
	}
	p.mu.Lock()
	if p.bytes+cap(b) <= stdlibSpareBytes {
		p.free = append(p.free, b)
		p.bytes += cap(b)
	}
	p.mu.Unlock()
}
