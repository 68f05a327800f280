package interop_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/interop/internal/tarsidl"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const tarsnodeTarsObj = "Interop.NodeServer.EchoTarsObj"

// echoReply is echo's reply as a generated result type decodes it.
type echoReply struct {
	ret int32
	rsp []byte
}

func (r *echoReply) UnmarshalTars(b []byte) (err error) {
	r.ret, r.rsp, err = tarsidl.DecodeEchoReply(b)
	return err
}

// nodeServerProxy starts TarsNode's server over proto and returns a proxy of its EchoTars.
func nodeServerProxy(t *testing.T, proto string) *servantproxy.ServantProxy {
	t.Helper()
	s := startNodeServer(t, tarsnodeTarsObj, proto)
	sp, err := newComm(t).Proxy(tarsnodeTarsObj + "@" + s.endpoint(proto))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// nodeEcho calls echo with data and checks what came back.
func nodeEcho(ctx context.Context, sp *servantproxy.ServantProxy, data []byte) error {
	body, err := sp.InvokeRaw(ctx, tarsidl.FuncEcho, tarsidl.EncodeEcho(data))
	if err != nil {
		return err
	}
	ret, out, err := tarsidl.DecodeEchoReply(body)
	if err != nil {
		return err
	}
	if ret != 0 || !bytes.Equal(out, data) {
		return fmt.Errorf("ret %d, %d bytes back of %d, equal %v", ret, len(out), len(data), bytes.Equal(out, data))
	}
	return nil
}

// TestTarsNodeServer calls TarsNode's server (@tars/rpc 2.0.15, serving EchoTars as tars2node
// writes a servant) with tarscomm's client over TCP: echoes of every size up to 4 MiB, a sum
// with a long out parameter, 200 async calls at once, tars_ping, one-way calls, the error
// replies TarsNode writes (an unknown function, a body that does not decode, a servant's
// sendErrorResponse) and a call that times out, after which the connection still serves.
func TestTarsNodeServer(t *testing.T) {
	sp := nodeServerProxy(t, "tcp")
	ctx := testCtx(t)
	for i, n := range sizes {
		if err := nodeEcho(ctx, sp, job.Payload(n, int64(i))); err != nil {
			t.Errorf("echo of %d bytes: %v", n, err)
		}
	}
	checkSum(t, ctx, sp, []int32{1, -2, 1 << 30, 1 << 30, 7}, "label")

	const inFlight = 200
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for i := range inFlight {
		data := job.Payload(100+i, int64(i))
		wg.Add(1)
		if err := sp.AsyncInvokeRaw(ctx, tarsidl.FuncEcho, tarsidl.EncodeEcho(data), func(body []byte, err error) {
			defer wg.Done()
			if err == nil {
				var out []byte
				if _, out, err = tarsidl.DecodeEchoReply(body); err == nil && !bytes.Equal(out, data) {
					err = errors.New("reply differs")
				}
			}
			if err != nil {
				errs <- fmt.Errorf("async echo %d: %w", i, err)
			}
		}); err != nil {
			wg.Done()
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	if err := sp.Ping(ctx); err != nil {
		t.Errorf("tars_ping: %v", err)
	}
	for i := range 3 {
		if err := sp.InvokeOnewayRaw(ctx, tarsidl.FuncEcho, tarsidl.EncodeEcho([]byte{byte(i)})); err != nil {
			t.Errorf("one-way echo: %v", err)
		}
	}
	if err := nodeEcho(ctx, sp, []byte("after one-way calls")); err != nil {
		t.Errorf("echo after one-way calls (TarsNode answers none): %v", err)
	}

	// TarsNode's error replies: iRet and sResultDesc, an empty sBuffer.
	_, err := sp.InvokeRaw(ctx, "nosuchfunc", nil)
	if se := serverError(t, "unknown function", err); se.Code != codec.RetNoFunc {
		t.Errorf("unknown function: code %d %q, want %d", se.Code, se.Desc, codec.RetNoFunc)
	}
	_, err = sp.InvokeRaw(ctx, tarsidl.FuncEcho, []byte{0x1d, 0x00}) // a truncated vector<byte>
	if se := serverError(t, "undecodable body", err); se.Code != codec.RetServerDecode || !strings.Contains(se.Desc, "BindAdapter Exception") {
		t.Errorf("undecodable body: code %d %q, want %d and TarsNode's exception", se.Code, se.Desc, codec.RetServerDecode)
	}
	for _, code := range []int32{7, 100000, -99} {
		var e codec.Encoder
		e.WriteInt32(1, code)
		e.WriteString(2, "failed on purpose")
		_, err = sp.InvokeRaw(ctx, "fail", e.Buf)
		if se := serverError(t, "fail", err); se.Code != code || se.Desc != "failed on purpose" {
			t.Errorf("sendErrorResponse(%d): code %d %q, want %d \"failed on purpose\"", code, se.Code, se.Desc, code)
		}
	}

	// A servant's exception with a code that is not a number: TarsNode answers iRet 0 (NaN
	// written as an int), an empty body and the text in sResultDesc. Like TarsCpp's client,
	// tarscomm reads iRet, so the call fails only when the body does not decode: the error then
	// carries the text.
	err = sp.InvokeTars(ctx, "throw", nil, new(echoReply))
	if !errors.Is(err, servantproxy.ErrDecode) || !strings.Contains(err.Error(), "BindAdapter Exception:not implemented") {
		t.Errorf("a servant's exception: %v, want ErrDecode with TarsNode's text", err)
	}

	// TarsNode's server does not end a call at iTimeout: the reply comes 1 s late and is dropped.
	_, err = sp.InvokeRaw(ctx, tarsidl.FuncSleep, tarsidl.EncodeSleep(1000), servantproxy.WithTimeout(200*time.Millisecond))
	if !errors.Is(err, servantproxy.ErrTimeout) {
		t.Errorf("sleep(1000) with a 200 ms timeout: %v, want ErrTimeout", err)
	}
	time.Sleep(time.Second) // the late reply arrives
	if err := nodeEcho(ctx, sp, []byte("after a late reply")); err != nil {
		t.Errorf("echo after a late reply: %v", err)
	}
}

// TestTarsNodeServerUDP calls TarsNode's server over UDP: a request and its reply a datagram
// each.
func TestTarsNodeServerUDP(t *testing.T) {
	sp := nodeServerProxy(t, "udp")
	ctx := testCtx(t)
	for i, n := range []int{0, 1, 1000, 30000} {
		if err := nodeEcho(ctx, sp, job.Payload(n, int64(i))); err != nil {
			t.Errorf("echo of %d bytes over UDP: %v", n, err)
		}
	}
	checkSum(t, ctx, sp, []int32{3, 4}, "udp")
	_, err := sp.InvokeRaw(ctx, "nosuchfunc", nil)
	if se := serverError(t, "unknown function over UDP", err); se.Code != codec.RetNoFunc {
		t.Errorf("unknown function over UDP: code %d %q, want %d", se.Code, se.Desc, codec.RetNoFunc)
	}
}

// TestTarsNodeClient calls tarscomm's server with TarsNode's client (@tars/rpc 2.0.15, through
// a proxy as tars2node writes one): echoes up to 1 MiB, a sum with a long out parameter, 200
// calls at once, the refusals of an unknown function, an undecodable body and a handler's
// error, a one-way call that the server runs, a call that times out on TarsNode's side after
// which the connection still serves, and TUP requests of both versions, refused in a reply
// TarsNode's TUP client reads.
func TestTarsNodeClient(t *testing.T) {
	s := startTarscommServer(t, "node")
	res := runNodeClient(t, s.tarsProxy(),
		nodeStep{"op": "echo", "size": 0},
		nodeStep{"op": "echo", "size": 1},
		nodeStep{"op": "echo", "size": 4096},
		nodeStep{"op": "echo", "size": 1 << 20},
		nodeStep{"op": "sum", "nums": []int32{1, -2, 1 << 30, 1 << 30, 7}, "label": "label"},
		nodeStep{"op": "parallel", "n": 200, "size": 100},
		nodeStep{"op": "raw", "func": "nosuchfunc", "hex": ""},
		nodeStep{"op": "raw", "func": tarsidl.FuncEcho, "hex": "1d00"}, // a truncated vector<byte>
		nodeStep{"op": "timeout", "ms": 300},
		nodeStep{"op": "sleep", "ms": 3000},
		nodeStep{"op": "timeout", "ms": 10000},
		nodeStep{"op": "echo", "size": 5},
		nodeStep{"op": "tup", "version": 3},
		nodeStep{"op": "tup", "version": 2},
	)
	for i, n := range []int{0, 1, 4096, 1 << 20} {
		if called(t, fmt.Sprintf("echo of %d bytes", n), res[i], 0); !res[i].OK || res[i].Size != n {
			t.Errorf("echo of %d bytes: %d bytes back, equal %v", n, res[i].Size, res[i].OK)
		}
	}
	if called(t, "sum", res[4], 5); res[4].Total != 2<<30+6 || res[4].Echoed != "label" {
		t.Errorf("sum: total %v, label %q; want %d, \"label\"", res[4].Total, res[4].Echoed, 2<<30+6)
	}
	if p := res[5]; p.N != 200 || p.Failed != 0 {
		t.Errorf("200 echoes at once: %d of %d failed", p.Failed, p.N)
	}
	refused(t, "unknown function", res[6], codec.RetNoFunc)
	refused(t, "undecodable body", res[7], codec.RetServerDecode)
	// tarscomm's server ends the handler's ctx at iTimeout (300 ms), so sleep answers about when
	// TarsNode's timer fires: either may come first.
	if r := res[9]; !(r.Code != nil && *r.Code == -13001) && !(r.Ret != nil && *r.Ret == 0) {
		t.Errorf("sleep(3000) with a 300 ms timeout: code %v %q ret %v, want TarsNode's timeout -13001 or ret 0", deref(r.Code), r.Message, deref(r.Ret))
	}
	if called(t, "echo after a timeout", res[11], 0); !res[11].OK {
		t.Errorf("echo after a timeout: reply differs")
	}
	// TUP: TarsNode's client in TUP mode reads every reply as a request packet with the code in
	// status STATUS_RESULT_CODE; it takes no description from it.
	refused(t, "TUP version 3", res[12], codec.RetServerDecode)
	refused(t, "TUP version 2", res[13], codec.RetServerDecode)

	// The protobuf servant: a handler's error, and a one-way call the server runs.
	fail, err := proto.Marshal(&echopb.FailReq{Code: 7, Desc: "failed on purpose"})
	if err != nil {
		t.Fatal(err)
	}
	note, err := proto.Marshal(&echopb.NoteReq{Tag: "node-oneway", Seq: 42})
	if err != nil {
		t.Fatal(err)
	}
	res = runNodeClient(t, s.pbProxy(),
		nodeStep{"op": "raw", "func": "Fail", "hex": hex.EncodeToString(fail)},
		nodeStep{"op": "raw", "func": "Note", "hex": hex.EncodeToString(note), "oneway": true},
	)
	if refused(t, "Fail", res[0], 7); res[0].Message != "failed on purpose" {
		t.Errorf("Fail: message %q, want \"failed on purpose\" (sResultDesc)", res[0].Message)
	}
	eventually(t, "the one-way Note from TarsNode's client to run", func() bool {
		return slices.Equal(s.echo.recorded("node-oneway"), []int64{42})
	})
	s.echo.mu.Lock()
	oneways := s.echo.oneways
	s.echo.mu.Unlock()
	if oneways != 1 {
		t.Errorf("Note ran %d times as one-way, want 1 (TarsNode's packetType 1)", oneways)
	}
}

// TestTarsNodeTupClientThroughStop: TarsNode's client in TUP mode keeps its connection to
// tarscomm's server while the server stops, then calls again: its process goes on, and the
// call after the Stop fails as a call to a server gone. Before, Stop's notice (a TARS reply, for
// request id -1) went on the TUP connection too: TarsNode's client reads every packet of a TUP
// connection as a TUP reply, threw on it in its socket's handler, and the Node.js process ended
// (found by a review of TarsNode's wire).
func TestTarsNodeTupClientThroughStop(t *testing.T) {
	s := startTarscommServer(t, "tupstop")
	c := startNodeClient(t, s.tarsProxy(),
		nodeStep{"op": "tup", "version": 3},
		nodeStep{"op": "wait"},
		nodeStep{"op": "tup", "version": 3, "timeout": 500},
	)
	refused(t, "TUP version 3", c.next(t), codec.RetServerDecode)
	if r := c.next(t); r.Op != "wait" {
		t.Fatalf("client.js: %+v, want the wait", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	c.resume(t)
	// TarsNode fails a call to a server gone at its timeout.
	refused(t, "a TUP call to the stopped server", c.next(t), -13001)
	c.wait(t)
}

// TestTarsNodeClientUDP calls tarscomm's server over UDP with TarsNode's client: a request and
// its reply a datagram each.
func TestTarsNodeClientUDP(t *testing.T) {
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-udp")))
	if err := tarsidl.Register(s, tarscommTarsObj); err != nil {
		t.Fatal(err)
	}
	port := serve(t, s, "udp://127.0.0.1:0", "the UDP server")
	res := runNodeClient(t, fmt.Sprintf("%s@udp -h 127.0.0.1 -p %d -t 60000", tarscommTarsObj, port),
		nodeStep{"op": "echo", "size": 0},
		nodeStep{"op": "echo", "size": 1000},
		nodeStep{"op": "echo", "size": 30000},
		nodeStep{"op": "sum", "nums": []int32{3, 4}, "label": "udp"},
		nodeStep{"op": "raw", "func": "nosuchfunc", "hex": ""},
	)
	for i, n := range []int{0, 1000, 30000} {
		if called(t, fmt.Sprintf("echo of %d bytes over UDP", n), res[i], 0); !res[i].OK || res[i].Size != n {
			t.Errorf("echo of %d bytes over UDP: %d bytes back, equal %v", n, res[i].Size, res[i].OK)
		}
	}
	if called(t, "sum over UDP", res[3], 2); res[3].Total != 7 || res[3].Echoed != "udp" {
		t.Errorf("sum over UDP: total %v, label %q; want 7, \"udp\"", res[3].Total, res[3].Echoed)
	}
	refused(t, "unknown function over UDP", res[4], codec.RetNoFunc)
}
