package communicator_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// badReplyLimit is how soon a call must fail once its connection is closed for bad input.
const badReplyLimit = 500 * time.Millisecond

// TestBadInputCorruptReply replaces the server's reply with bad bytes at the proxy: a length
// below 4, a length of exactly 4 (no packet), a length above max-packet-size, an undecodable
// packet, a truncated frame followed by a close, and random bytes followed by a close. Each time
// the client closes (or loses) the connection and the sync and async calls waiting on it fail
// promptly with ErrConnection; nothing panics, and the next call reconnects and succeeds.
func TestBadInputCorruptReply(t *testing.T) {
	random := make([]byte, 64)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	for _, tt := range []struct {
		name       string
		reply      []byte
		closeAfter bool
	}{
		{name: "length below 4", reply: []byte{0, 0, 0, 2}},
		{name: "length 4", reply: []byte{0, 0, 0, 4}},
		{name: "length above max", reply: []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}},
		{name: "undecodable packet", reply: []byte{0, 0, 0, 9, 0xff, 0xee, 0xdd, 0xcc, 0xbb}},
		{name: "truncated frame then close", reply: []byte{0, 0, 0, 100, 0x10, 0x01}, closeAfter: true},
		{name: "random bytes then close", reply: random, closeAfter: true},
	} {
		for _, kind := range []callKind{syncCall, asyncCall} {
			t.Run(tt.name+"/"+string(kind), func(t *testing.T) {
				ep := startFaultEP(t, "a")
				comm := newComm(t, faultConf(nil))
				sp := proxyToEPs(t, comm, ep)
				ctx := testCtx(t)
				if err := callOnce(t, ctx, kind, sp, 0, 5*time.Second); err != nil {
					t.Fatalf("warm-up call: %v", err)
				}
				ep.p.CorruptNext(tt.reply, tt.closeAfter)
				start := time.Now()
				err := callOnce(t, ctx, kind, sp, 1, 5*time.Second)
				if !errors.Is(err, communicator.ErrConnection) {
					t.Fatalf("call answered with %q: err = %v, want ErrConnection", tt.name, err)
				}
				within(t, fmt.Sprintf("failing the call answered with %q", tt.name), time.Since(start), badReplyLimit)
				if err := callOnce(t, ctx, kind, sp, 2, 5*time.Second); err != nil {
					t.Fatalf("call after the bad reply: %v", err)
				}
			})
		}
	}
}

// TestBadInputReplyAboveMaxPacketSize sets max-packet-size to 256 bytes and gets a reply larger
// than that to a small request (a raw server pads the reply to "big"): the call fails promptly
// with ErrDecode naming the sizes, the reply is skipped, and small calls work before and after
// on the same connection. (A request that large is refused before it is sent:
// TestOversizedRequestFailsAlone; other calls in flight: TestOversizedReplySkipped.) Before, the
// connection was closed and the call failed with ErrConnection.
func TestBadInputReplyAboveMaxPacketSize(t *testing.T) {
	raw := startRawServer(t, func(req *codec.RequestPacket, w net.Conn) bool {
		var in hellopb.HelloRequest
		_ = proto.Unmarshal(req.Buffer, &in)
		msg := in.GetName() + "@raw"
		if in.GetName() == "big" {
			msg += strings.Repeat("L", 400)
		}
		body, _ := proto.Marshal(&hellopb.HelloReply{Message: msg, Seq: in.GetSeq()})
		_, err := w.Write(replyFrame(req, req.RequestID, body))
		return err == nil
	})
	comm := newComm(t, faultConf(func(c *conf.Config) { c.MaxPacketSize = 256 }))
	sp := proxyToAddrs(t, comm, raw.endpoint())
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "small", 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := sayHello(ctx, sp, "big", 2)
	if !errors.Is(err, communicator.ErrDecode) || !strings.Contains(err.Error(), "exceeds max-packet-size 256") {
		t.Fatalf("reply above max-packet-size: err = %v, want ErrDecode naming the limit", err)
	}
	within(t, "failing the call with a reply above max-packet-size", time.Since(start), badReplyLimit)
	if _, err := sayHello(ctx, sp, "small", 3); err != nil {
		t.Fatalf("call after the oversized reply: %v", err)
	}
	if n := raw.accepts.Load(); n != 1 {
		t.Errorf("the raw server accepted %d connections, want 1: the oversized reply was skipped on it", n)
	}
}

// helloReply answers a SayHello request from a raw server the way the greeter does.
func helloReply(req *codec.RequestPacket, id int32, from string) []byte {
	var in hellopb.HelloRequest
	_ = proto.Unmarshal(req.Buffer, &in)
	body, _ := proto.Marshal(&hellopb.HelloReply{Message: in.GetName() + "@" + from, Seq: in.GetSeq()})
	return replyFrame(req, id, body)
}

// TestBadInputUnknownRequestID answers every request first with a well-formed reply for a
// request id nobody sent (and a server push with id 0), then with the right reply: the strays are
// dropped, the connection is kept, and every call gets its own reply.
func TestBadInputUnknownRequestID(t *testing.T) {
	raw := startRawServer(t, func(req *codec.RequestPacket, w net.Conn) bool {
		var out []byte
		out = append(out, helloReply(req, req.RequestID+1000000, "stray")...)
		out = append(out, helloReply(req, codec.PushRequestID, "push")...)
		out = append(out, helloReply(req, req.RequestID, "raw")...)
		_, err := w.Write(out)
		return err == nil
	})
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, raw.endpoint())
	ctx := testCtx(t)
	for i := range 20 {
		from, err := sayHello(ctx, sp, "x", uint64(i))
		if err != nil || from != "raw" {
			t.Fatalf("call %d: from %q, err %v; want the reply from \"raw\"", i, from, err)
		}
		if err := callOnce(t, ctx, asyncCall, sp, uint64(100+i), 5*time.Second); err != nil {
			t.Fatalf("async call %d: %v", i, err)
		}
	}
	if got := raw.accepts.Load(); got != 1 {
		t.Fatalf("the raw server accepted %d connections, want 1: stray replies must not cost the connection", got)
	}
}

// TestBadInputReplyToOneway answers one-way requests although no reply is due: the reply is
// dropped, the connection is kept, and later calls get their own replies.
func TestBadInputReplyToOneway(t *testing.T) {
	oneways := make(chan int32, 100)
	raw := startRawServer(t, func(req *codec.RequestPacket, w net.Conn) bool {
		if req.PacketType == codec.PacketOneway {
			oneways <- req.RequestID
		}
		_, err := w.Write(helloReply(req, req.RequestID, "raw"))
		return err == nil
	})
	comm := newComm(t, faultConf(nil))
	sp := proxyToAddrs(t, comm, raw.endpoint())
	ctx := testCtx(t)
	for i := range 10 {
		if err := onewayHello(ctx, sp, "oneway", uint64(i)); err != nil {
			t.Fatalf("one-way call %d: %v", i, err)
		}
		select {
		case <-oneways:
		case <-time.After(5 * time.Second):
			t.Fatalf("one-way call %d never reached the server", i)
		}
		time.Sleep(5 * time.Millisecond) // let the unwanted reply arrive first
		from, err := sayHello(ctx, sp, "x", uint64(i))
		if err != nil || from != "raw" {
			t.Fatalf("call %d after a replied one-way call: from %q, err %v", i, from, err)
		}
	}
	if got := raw.accepts.Load(); got != 1 {
		t.Fatalf("the raw server accepted %d connections, want 1", got)
	}
}

// TestBadInputTruncatedFrameStalls sends half a frame and keeps the connection open: the waiting
// call ends by its deadline with ErrTimeout (it cannot know more), never hangs, and the client
// gets back to working calls (the desynchronized stream is eventually given up) within a few
// seconds.
func TestBadInputTruncatedFrameStalls(t *testing.T) {
	ep := startFaultEP(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyToEPs(t, comm, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.p.CorruptNext([]byte{0, 0, 0, 200, 0x10, 0x01}, false)
	const timeout = 100 * time.Millisecond
	start := time.Now()
	err := callOnce(t, ctx, syncCall, sp, 1, 5*time.Second, withTimeout(timeout)...)
	if !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("call answered with half a frame: err = %v, want ErrTimeout", err)
	}
	checkTook(t, "the call answered with half a frame", time.Since(start), timeout-5*time.Millisecond, timeout+tick+slack)
	took := eventually(t, 5*time.Second, "calls work again after a truncated frame", func() bool {
		_, err := sayHello(ctx, sp, "after", 2, withTimeout(timeout)...)
		return err == nil
	})
	t.Logf("calls work again %v after the truncated frame", took)
}

// TestBadInputReplyAheadOfSend: a reply naming a call that is still in the connection's send
// queue (ids are sequential, so a peer can answer the id after the one it is reading) answers a
// request the peer never received, and is dropped as a reply for an unknown id. Call A, a large
// request, is being written to a peer that does not read yet, and B waits in the queue behind it;
// the peer then answers B's id. B must end with its own reply once it has been sent, A with
// its own, and the connection stay healthy: before, the early reply completed B while the queue
// still held it, and the queue later wrote the recycled call's frame or kept counting its bytes.
func TestBadInputReplyAheadOfSend(t *testing.T) {
	const sizeA, sizeB = 8 << 20, 64 << 10
	goCh, earlyDropped := make(chan struct{}), make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	rs := serveRaw(t, listenSmallRcvBuf(t), func(n int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		answer := func(req *codec.RequestPacket) bool {
			_, err := c.Write(replyFrame(req, req.RequestID, []byte("ok:"+req.FuncName)))
			return err == nil
		}
		if n != 1 {
			t.Errorf("connection %d: the client reconnected", n)
			_ = readRequests(c, 0, answer)
			return
		}
		head := make([]byte, 64)
		if _, err := io.ReadFull(c, head); err != nil {
			return
		}
		idA, ok := codec.RequestIDOf(head)
		if !ok {
			t.Errorf("no request id in the first request")
			return
		}
		select {
		case <-goCh:
		case <-stop:
			return
		}
		if _, err := c.Write(replyFrame(&codec.RequestPacket{Version: codec.VersionTars}, idA+1, []byte("early"))); err != nil {
			return
		}
		// Reading A lets the client send B: only once the client has dropped the early reply
		// (on a busy machine its loop could otherwise read it after B went out, when it is, to
		// the client, B's reply).
		select {
		case <-earlyDropped:
		case <-stop:
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(head))-int64(len(head))); err != nil {
			return
		}
		if _, err := c.Write(replyFrame(&codec.RequestPacket{Version: codec.VersionTars}, idA, []byte("ok:A"))); err != nil {
			return
		}
		_ = readRequests(c, 0, answer)
	})
	comm := newComm(t, livenessTimeouts)
	sp := proxyToAddrs(t, comm, rs.endpoint())
	ctx := testCtx(t)
	pending := func() int {
		for _, e := range comm.Stats().Endpoints {
			if e.Endpoint == rs.addr() {
				return e.Pending
			}
		}
		return 0
	}
	late := func() uint64 {
		for _, e := range comm.Stats().Endpoints {
			if e.Endpoint == rs.addr() {
				return e.Late
			}
		}
		return 0
	}
	type result struct {
		body []byte
		err  error
	}
	call := func(fn string, size int) chan result {
		ch := make(chan result, 1)
		go func() {
			body, err := sp.InvokeRaw(ctx, fn, bytes.Repeat([]byte{fn[0]}, size))
			ch <- result{body, err}
		}()
		return ch
	}
	resA := call("A", sizeA)
	waitFor(t, "call A pending", func() bool { return pending() == 1 })
	resB := call("B", sizeB)
	waitFor(t, "call B queued behind A", func() bool { return pending() == 2 })
	close(goCh)
	waitFor(t, "the early reply dropped", func() bool { return late() == 1 })
	close(earlyDropped)
	for _, r := range []struct {
		fn string
		ch chan result
	}{{"A", resA}, {"B", resB}} {
		got := <-r.ch
		if got.err != nil || string(got.body) != "ok:"+r.fn {
			t.Errorf("call %s: body %q, err %v; want its own reply %q", r.fn, got.body, got.err, "ok:"+r.fn)
		}
	}
	for i := range 3 {
		body, err := sp.InvokeRaw(ctx, "C", []byte{byte(i)})
		if err != nil || string(body) != "ok:C" {
			t.Fatalf("call C%d on the same connection: body %q, err %v", i, body, err)
		}
	}
}
