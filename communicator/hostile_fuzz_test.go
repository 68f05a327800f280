package communicator_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// The answers a hostile server gives, one per request it reads, in the order of its script.
const (
	opReply      = iota // the right reply
	opRet               // the right request id, an error code from the script
	opTwice             // the right reply, twice
	opOtherID           // the reply of the request read before this one on the connection
	opUnknownID         // a request id no call has
	opSilent            // no answer: the call must time out
	opRawPacket         // a frame whose packet is the script's next bytes, whatever they are
	opSplit             // the right reply in two writes, a moment apart
	opClose             // close the connection instead of answering
	opPush              // a push packet (request id 0) first, then the right reply
	opHugeLength        // a frame header over the client's max-packet-size
	opMaps              // the right reply with context and status maps made of script bytes
	opUnder             // the script's next bytes written under any TLS, on the TCP connection
	opSlow              // the right reply after 20 ms without reading: the client's writes back up
	numOps
)

// hostileScript is what a hostile server answers: the script's bytes, read in turn across its
// connections. Once the script is spent (or spend is called), every request gets its right
// reply.
type hostileScript struct {
	mu    sync.Mutex
	data  []byte
	pos   int
	spent bool
	// foreign is set once an answer could hand a call a body that is not its own (another
	// call's, or the script's bytes): only then may a successful call's body differ from its
	// request's.
	foreign atomic.Bool
	auths   atomic.Int64 // auth requests read
}

// next returns the script's next byte, or ok false once it is spent.
func (s *hostileScript) next() (b byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spent || s.pos >= len(s.data) {
		return 0, false
	}
	b = s.data[s.pos]
	s.pos++
	return b, true
}

// take returns up to n of the script's next bytes.
func (s *hostileScript) take(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, len(s.data)-s.pos)
	if s.spent || n <= 0 {
		return nil
	}
	b := s.data[s.pos : s.pos+n]
	s.pos += n
	return b
}

func (s *hostileScript) spend() {
	s.mu.Lock()
	s.spent = true
	s.mu.Unlock()
}

// hostileMaxPacket is the client's max-packet-size in FuzzHostileServer, and the largest request
// its server reads: opHugeLength's header goes one byte over it.
const hostileMaxPacket = 4 << 20

// hostileSizes are the body sizes of a run's large calls (every third), by the class in bits 4
// and 5 of the script's first byte: none (all 8 bytes), 4 KiB, 300 KiB (a frame the client
// writes from its own buffer) and 1.5 MiB (one a writer goroutine finishes when the socket does
// not take it at once).
var hostileSizes = [4]int{8, 4 << 10, 300 << 10, 1536 << 10}

// hostileBody is call i's request body in a run whose large calls are size bytes: its index,
// then, for a large call, bytes that depend on it, so that another call's body never passes for
// its own.
func hostileBody(i, size int) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(i))
	if i%3 != 1 || size <= len(b) {
		return b
	}
	for len(b) < size {
		b = append(b, byte(i), byte(len(b)))
	}
	return b[:size]
}

// How the writes of an answer are made.
const (
	sendFramed = iota // on the connection (through TLS on ssl endpoints)
	sendUnder         // on the TCP connection under any TLS: bytes in the middle of its records
	hangUp            // none: close the connection instead
)

// answer returns what the script says to send for req, the request read after the one whose id
// is prev (-1 for a connection's first): the writes to make in turn (a moment apart), and how.
func (s *hostileScript) answer(req *codec.RequestPacket, prev int32) (writes [][]byte, how int) {
	rsp := &codec.ResponsePacket{
		Version: req.Version, PacketType: req.PacketType, RequestID: req.RequestID,
		Buffer: bytes.Clone(req.Buffer),
	}
	op, ok := s.next()
	if !ok {
		op = opReply
	}
	switch op % numOps {
	case opReply:
	case opRet:
		b, _ := s.next()
		rsp.Ret = int32(int8(b)) | 1 // never RetOK
		rsp.Buffer, rsp.ResultDesc = nil, "scripted error"
	case opTwice:
		out := codec.AppendResponse(nil, rsp)
		return [][]byte{out, out}, sendFramed
	case opOtherID:
		s.foreign.Store(true)
		if prev >= 0 {
			rsp.RequestID = prev
		}
	case opUnknownID:
		rsp.RequestID = req.RequestID + 1<<20
	case opSilent:
		return nil, sendFramed
	case opRawPacket:
		s.foreign.Store(true)
		n, _ := s.next()
		packet := s.take(int(n % 64))
		out := binary.BigEndian.AppendUint32(nil, uint32(codec.HeaderLen+len(packet)))
		return [][]byte{append(out, packet...)}, sendFramed
	case opSplit:
		out := codec.AppendResponse(nil, rsp)
		n, _ := s.next()
		cut := 1 + int(n)%(len(out)-1)
		return [][]byte{out[:cut], out[cut:]}, sendFramed
	case opClose:
		return nil, hangUp
	case opPush:
		push := &codec.ResponsePacket{RequestID: codec.PushRequestID, Buffer: s.take(8)}
		if b, _ := s.next(); b&1 == 1 {
			push.ResultDesc = codec.ReconnectDesc
		}
		return [][]byte{codec.AppendResponse(nil, push), codec.AppendResponse(nil, rsp)}, sendFramed
	case opHugeLength:
		return [][]byte{binary.BigEndian.AppendUint32(nil, hostileMaxPacket+1)}, sendFramed
	case opMaps:
		rsp.Context = map[string]string{string(s.take(3)): string(s.take(5))}
		rsp.Status = map[string]string{string(s.take(2)): string(s.take(4))}
	case opSlow:
		time.Sleep(20 * time.Millisecond)
	case opUnder:
		s.foreign.Store(true)
		n, _ := s.next()
		return [][]byte{append([]byte{0x17}, s.take(1+int(n%32))...)}, sendUnder
	}
	return [][]byte{codec.AppendResponse(nil, rsp)}, sendFramed
}

// answerAuth answers the auth request req on c (the first packet of a connection to an -e 1
// endpoint) as the script says: accept it (with, for one value, another call's reply glued to
// the acceptance), refuse it, or hang up. It reports whether to go on reading c.
func (s *hostileScript) answerAuth(c net.Conn, req *codec.RequestPacket) bool {
	s.auths.Add(1)
	b, _ := s.next() // spent: 0, accept
	var out []byte
	switch b % 4 {
	case 0:
		out = auth.AppendResponse(nil, req)
	case 1:
		out = auth.AppendResponse(nil, req)
		out = codec.AppendResponse(out, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID + 1<<20})
	case 2:
		out = codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: []byte("AUTH_NO")})
	case 3:
		return false
	}
	_, err := c.Write(out)
	return err == nil
}

// serveHostile answers the requests read from c as script says, until c fails.
func serveHostile(c net.Conn, script *hostileScript) {
	defer func() { _ = c.Close() }()
	var prev int32 = -1
	_ = readRequests(c, hostileMaxPacket, func(req *codec.RequestPacket) bool {
		if auth.IsRequest(req) {
			return script.answerAuth(c, req)
		}
		writes, how := script.answer(req, prev)
		if how == hangUp {
			return false
		}
		prev = req.RequestID
		w := c
		if tc, ok := c.(*tls.Conn); ok && how == sendUnder {
			w = tc.NetConn()
		}
		for i, b := range writes {
			if i > 0 {
				time.Sleep(time.Millisecond)
			}
			if _, err := w.Write(b); err != nil {
				return false
			}
		}
		return true
	})
}

// serveHostileUDP answers the request datagrams read from pc as script says, one datagram per
// write, until pc is closed; a hang-up sends nothing.
func serveHostileUDP(pc net.PacketConn, script *hostileScript) {
	var prev int32 = -1
	readDatagrams(pc, func(req *codec.RequestPacket, from net.Addr) {
		writes, _ := script.answer(req, prev)
		prev = req.RequestID
		for _, w := range writes {
			_, _ = pc.WriteTo(w, from)
		}
	})
}

// hostileSeeds are the seeds of every FuzzHostile target: each answer at least once, the pairs
// that make a call get another's reply, and two closes of the Communicator mid-flight.
var hostileSeeds = [][]byte{
	nil,
	{opReply, opRet, 7, opTwice, opUnknownID, opMaps, 'k', 'e', 'y', 'v', 'a', 'l', 'u', 'e', 's', 't', 'x', 'y', 'z', 'w'},
	{opSilent, opSplit, 3, opSplit, 40, opReply},
	{opClose, opReply, opClose, opReply},
	{opPush, 1, 2, 3, 4, 5, 6, 7, 8, 0, opPush, 9, 9, 9, 9, 9, 9, 9, 9, 1},
	{opHugeLength, opReply, opReply},
	{opOtherID, opOtherID, opReply, opTwice, opOtherID},
	{opSilent, opOtherID, opSilent, opOtherID, opSilent, opOtherID},
	{opRawPacket, 9, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, opReply},
	{opRawPacket, 0, opRawPacket, 2, 0x10, 0x01},
	{opReply, opUnder, 3, 1, 2, 3, 4, opReply, opReply},
	// Large calls of 4 KiB, 300 KiB and 1.5 MiB (bits 4-5 of the first byte, which is also
	// opSlow: 0x1b, 0x29 and 0x37 are 13 modulo numOps): the slow reader lets writes back up.
	{0x1b, opSlow, opSlow, opReply, opSilent, opSlow},
	{0x29, opSlow, opClose, opSlow, opReply},
	{0x37, opSlow, opSlow, opSplit, 100, opSlow, opTwice, opSlow, opHugeLength},
	// Close with calls in flight, 3 and 6 ms after the last call (0xf3 is opSilent, 0xf6
	// opClose; both make large calls of 1.5 MiB).
	{0xf3, opReply, opSplit, 9, opTwice, opSilent},
	{0xf6, opSilent, opPush, 1, 2, 3, 4, 5, 6, 7, 8, 1, opReply},
}

// FuzzHostileServer points a Communicator at a server that answers each request as the fuzzed
// script says: rightly, with an error code, twice, with another call's request id or an unknown
// one, not at all, in pieces, with arbitrary packet bytes, with a push first, with a length over
// the limit, with context and status maps, with bytes under the TLS records, or by closing the
// connection; a script may also
// close the Communicator while its calls are in flight. Whatever it says: every sync call
// returns and every async callback runs exactly once, within the calls' deadline and a liveness
// bound, and before Close returns; a call that succeeds gets its own request's body back unless
// the script handed out foreign bodies, and one that fails has one of the documented errors
// (a server error only as the script sent it); once the script is spent the client's next calls
// succeed (on the connection the script left, or a new one); Close returns and no goroutine is
// left. `make test` runs the seeds; `make fuzz` explores.
func FuzzHostileServer(f *testing.F) {
	for _, seed := range hostileSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { hostileRun(t, "tcp", data) })
}

// FuzzHostileUDPServer is FuzzHostileServer over udp: each answer is datagrams (a split reply
// two halves, each dropped), and a hang-up sends nothing.
func FuzzHostileUDPServer(f *testing.F) {
	for _, seed := range hostileSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { hostileRun(t, "udp", data) })
}

// FuzzHostileTLSServer is FuzzHostileServer over ssl endpoints: the script's answers reach the
// client through TLS records, and the net thread's TLS layer hands them on.
func FuzzHostileTLSServer(f *testing.F) {
	for _, seed := range hostileSeeds {
		f.Add(seed)
	}
	ca := tlstest.NewCA(f, "ca")
	pair := ca.Issue(f, tlstest.Leaf{Name: "server"})
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: ca.File, Cert: pair.Cert, Key: pair.Key}, false)
	if err != nil {
		f.Fatal(err)
	}
	hostileTLS = &hostileTLSSetup{server: cfg, caFile: ca.File}
	f.Fuzz(func(t *testing.T, data []byte) { hostileRun(t, "ssl", data) })
}

// FuzzHostileAuthServer is FuzzHostileServer to an endpoint with TARS authentication (-e 1): the
// script also answers each connection's auth request (accepted, accepted with a stray reply
// glued on, refused, or hung up on).
func FuzzHostileAuthServer(f *testing.F) {
	for _, seed := range hostileSeeds {
		f.Add(seed)
	}
	f.Add([]byte{2, opReply, 3, 1, opTwice, opReply})
	f.Fuzz(func(t *testing.T, data []byte) { hostileRun(t, "tcp-auth", data) })
}

// hostileTLSSetup is FuzzHostileTLSServer's server configuration and the CA file its clients
// trust, made once for all its runs.
type hostileTLSSetup struct {
	server *tls.Config
	caFile string
}

var hostileTLS *hostileTLSSetup

// hostileRun is one run of FuzzHostileServer over network: "tcp", "udp", "ssl" or "tcp-auth"
// (tcp with -e 1). A script is cut at 256 bytes: longer ones add nothing but time.
func hostileRun(t *testing.T, network string, data []byte) {
	if len(data) > 256 {
		data = data[:256]
	}
	leakCheckEach(t) // registered first, so run last: after the server and the Communicator are closed
	script := &hostileScript{data: data}
	var addr string
	if network == "udp" {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); serveHostileUDP(pc, script) }()
		t.Cleanup(func() { _ = pc.Close(); <-done })
		addr = pc.LocalAddr().String()
	} else {
		ln := listenLoopback(t)
		addr = ln.Addr().String()
		if network == "ssl" {
			ln = tls.NewListener(ln, hostileTLS.server)
		}
		serveRaw(t, ln, func(_ int64, c net.Conn) { serveHostile(c, script) })
	}
	comm := newComm(t, func(c *conf.Config) {
		c.NetThread, c.AsyncThread = 2, 2
		c.MaxPacketSize = hostileMaxPacket
		if network == "ssl" {
			c.CA = hostileTLS.caFile
		}
		if network == "tcp-auth" {
			c.AccessKey, c.SecretKey = "app", "s3cret"
		}
	})
	host, port, _ := net.SplitHostPort(addr)
	ep := network + " -h " + host + " -p " + port
	if network == "tcp-auth" {
		ep = "tcp -h " + host + " -p " + port + " -e 1"
	}
	sp, err := comm.Proxy("Hostile.Obj@" + ep)
	if err != nil {
		t.Fatal(err)
	}
	// Pushes go to a callback, as they would in a client that takes them: the push's path to
	// the async workers is part of what the script exercises.
	sp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(*servantproxy.Push) {}})

	// A script whose first byte is 0xf0 or above also closes the Communicator while its calls
	// are in flight, (that byte & 0x0f) ms after the last one was made.
	closeEarly := len(data) > 0 && data[0] >= 0xf0
	size := hostileSizes[0]
	if len(data) > 0 {
		size = hostileSizes[data[0]>>4&3]
	}
	const calls, deadline = 24, 300 * time.Millisecond
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
		ran      [calls]atomic.Int32
		closed   atomic.Bool // Close has returned
	)
	report := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	check := func(i int, body, got []byte, err error) {
		if err == nil && !script.foreign.Load() && !bytes.Equal(got, body) {
			report("call %d succeeded with body %x, want its own %x", i, got, body)
		}
		if err != nil {
			if why := undocumented(err, script.foreign.Load()); why != "" {
				report("call %d: %v: %s", i, err, why)
			}
		}
	}
	for i := range calls {
		body := hostileBody(i, size)
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		wg.Add(1)
		if i%2 == 0 {
			go func() {
				defer wg.Done()
				defer cancel()
				got, err := sp.InvokeRaw(ctx, "f", body)
				ran[i].Add(1)
				check(i, body, got, err)
			}()
			continue
		}
		err := sp.AsyncInvokeRaw(ctx, "f", body, func(got []byte, err error) {
			defer wg.Done()
			defer cancel()
			if ran[i].Add(1) > 1 {
				report("async call %d called back twice", i)
				return
			}
			if closed.Load() {
				report("async call %d called back after Close returned", i)
			}
			check(i, body, got, err)
		})
		if err != nil {
			cancel()
			wg.Done()
			t.Fatalf("async call %d refused: %v", i, err)
		}
	}
	if closeEarly {
		time.Sleep(time.Duration(data[0]&0x0f) * time.Millisecond)
		if err := closeComm(t, comm); err != nil {
			t.Errorf("Close with calls in flight: %v", err)
		}
		closed.Store(true)
	}
	waitDone(t, &wg, "the hostile script's calls")
	for i := range calls {
		if n := ran[i].Load(); n != 1 {
			report("call %d ended %d times, want once", i, n)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	if closeEarly {
		return
	}

	// Script spent: the client recovers. A call may still meet a connection the script closed
	// (or is closing) and fail with a connection error, or the reply of a late request; a few
	// tries on, one succeeds.
	script.spend()
	var last error
	for try := 0; try < 5; try++ {
		time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body := []byte(fmt.Sprintf("recover %d", try))
		got, err := sp.InvokeRaw(ctx, "f", body)
		cancel()
		if err == nil && bytes.Equal(got, body) {
			last = nil
			break
		}
		last = fmt.Errorf("try %d: body %q, err %v", try, got, err)
	}
	if last != nil {
		t.Errorf("after the script, no call succeeded in 5 tries; the last: %v", last)
	}
	if n := script.auths.Load(); (network == "tcp-auth") != (n > 0) {
		t.Errorf("the server read %d auth requests over %s", n, network)
	}
	if err := closeComm(t, comm); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// undocumented says what is wrong with err, the error of a call to a hostile server, or "" if
// nothing is: it must match one of the errors the Communicator documents, and a server error
// must be one the script sent (an odd code, "scripted error") unless the script handed out
// arbitrary packets (foreign).
func undocumented(err error, foreign bool) string {
	var se *communicator.ServerError
	if errors.As(err, &se) {
		if !foreign && (se.Desc != "scripted error" || se.Code&1 == 0) {
			return fmt.Sprintf("a server error the script did not send (code %d, %q)", se.Code, se.Desc)
		}
		return ""
	}
	for _, want := range []error{communicator.ErrTimeout, communicator.ErrConnection, communicator.ErrClosed,
		communicator.ErrOverload, communicator.ErrQueueFull, communicator.ErrNoEndpoint,
		communicator.ErrDatagramTooLarge, communicator.ErrDecode /* a reply above max-packet-size */} {
		if errors.Is(err, want) {
			return ""
		}
	}
	return "matches none of the Communicator's documented errors"
}
