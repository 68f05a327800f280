package interop_test

// tarscomm client → TarsGo server.

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/interop/internal/tarsidl"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// echoProxy binds the generated EchoProxy to the protobuf servant of TarsGo server s.
func echoProxy(t *testing.T, comm *communicator.Communicator, s *tarsgoServer) *echopb.EchoProxy {
	t.Helper()
	prx := new(echopb.EchoProxy)
	if err := comm.StringToProxy(tarsgoPbObj+"@"+s.pbEndpoint(), prx); err != nil {
		t.Fatal(err)
	}
	return prx
}

// tarsProxy binds an untyped proxy to the .tars servant of TarsGo server s.
func tarsProxy(t *testing.T, comm *communicator.Communicator, s *tarsgoServer) *servantproxy.ServantProxy {
	t.Helper()
	sp, err := comm.Proxy(tarsgoTarsObj + "@" + s.tarsEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// serverError returns err as a *servantproxy.ServerError, failing the test if it is not one.
func serverError(t *testing.T, what string, err error) *servantproxy.ServerError {
	t.Helper()
	var se *servantproxy.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v (%T), want a *servantproxy.ServerError", what, err, err)
	}
	return se
}

// TestTarsGoServerVectors sends the request frames of the protocol test vectors (captured from TarsGo v1.4.6), byte for
// byte, to a live TarsGo server and compares its answers with the documented ones, byte for
// byte. TarsGo ignores sServantName (see TestTarsGoServerIgnoresServantName), so the vectors'
// servant names (Anchor.EchoServer...) reach our servants.
func TestTarsGoServerVectors(t *testing.T) {
	s := sharedTarsGoServer(t)
	for _, v := range []struct {
		name string
		port int
		req  string
		rsp  string // "" for no reply
	}{
		{"protobuf Echo", s.pbPort,
			"0000004110012c3c4001561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c",
			"0000001a10012c30014c5c6d0000090a0568656c6c6f1007780c"},
		{"unknown function", s.pbPort,
			// The request of id 1 with sFuncName "NoSuchFunc" and id 3.
			"0000004710012c3c4003561b416e63686f722e4563686f5365727665722e4563686f50624f626a660a4e6f5375636846756e637d0000090a0568656c6c6f1007810bb8980ca80c",
			"0000002010012c30034c50016d000c780c860d66756e63206d69736d61746368"},
		{"tars_ping", s.pbPort,
			"0000003c10012c3c4006561b416e63686f722e4563686f5365727665722e4563686f50624f626a6609746172735f70696e677d000c810bb8980ca80c",
			"0000001010012c30064c5c6d000c780c"},
		{".tars echo", s.tarsPort,
			"0000004310012c3c4009561d416e63686f722e4563686f5365727665722e4563686f546172734f626a66046563686f7d0000091d00000568656c6c6f810bb8980ca80c",
			"0000001b10012c30094c5c6d00000a0c2d00000568656c6c6f780c"},
		{"one-way", s.pbPort,
			"00000042100120013c4007561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c",
			""},
	} {
		t.Run(v.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(v.port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req, _ := hex.DecodeString(v.req)
			// The frames are well formed for our own codec too.
			var pkt codec.RequestPacket
			if err := codec.DecodeRequest(req, &pkt); err != nil {
				t.Fatalf("vector request does not decode: %v", err)
			}
			if _, err := conn.Write(req); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			if v.rsp == "" {
				// No reply to a one-way request: a ping sent after it is answered first.
				ping, _ := hex.DecodeString("0000003c10012c3c4006561b416e63686f722e4563686f5365727665722e4563686f50624f626a6609746172735f70696e677d000c810bb8980ca80c")
				if _, err := conn.Write(ping); err != nil {
					t.Fatal(err)
				}
				v.rsp = "0000001010012c30064c5c6d000c780c"
			}
			want, _ := hex.DecodeString(v.rsp)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(conn, got); err != nil {
				t.Fatalf("reading the reply: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("reply\n got  %x\n want %x", got, want)
			}
		})
	}
}

// TestTarsGoServerShortRequest sends a request with only tags 1 to 7: TarsGo's RequestPacket
// reader requires tags 8 to 10 too, but its server ignores the reader's error and serves what
// it decoded (with no iTimeout, hence no deadline). the protocol notes say "8 to 10 are
// optional"; more exactly, TarsGo's server ignores every decode error of the packet.
func TestTarsGoServerShortRequest(t *testing.T) {
	s := sharedTarsGoServer(t)
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.pbPort))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body, _ := hex.DecodeString("0a0568656c6c6f1007") // EchoReq{data: "hello", seq: 7}
	var e codec.Encoder
	var start int
	e.Buf, start = codec.BeginFrame(e.Buf)
	e.WriteInt16(1, codec.VersionTars)
	e.WriteInt8(2, codec.PacketNormal)
	e.WriteInt32(3, 0)
	e.WriteInt32(4, 11)
	e.WriteString(5, tarsgoPbObj)
	e.WriteString(6, "Echo")
	e.WriteBytes(7, body)
	codec.EndFrame(e.Buf, start)
	if _, err := conn.Write(e.Buf); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	fr := codec.NewFrameReader(conn, codec.DefaultMaxPacketSize)
	frame, err := fr.Next()
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	var rsp codec.ResponsePacket
	if err := codec.DecodeResponse(frame, &rsp); err != nil {
		t.Fatal(err)
	}
	if rsp.RequestID != 11 || rsp.Ret != 0 || !bytes.Equal(rsp.Buffer, body) {
		t.Errorf("reply id %d, ret %d, body %x; want 11, 0, %x", rsp.RequestID, rsp.Ret, rsp.Buffer, body)
	}
}

func TestTarsGoServerSync(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)
	for i, n := range sizes {
		t.Run(strconv.Itoa(n)+"B", func(t *testing.T) {
			data := job.Payload(n, int64(i))
			rsp, err := prx.Echo(ctx, &echopb.EchoReq{Data: data, Seq: int64(i)})
			if err != nil {
				t.Fatalf("Echo: %v", err)
			}
			if rsp.GetSeq() != int64(i) || !bytes.Equal(rsp.GetData(), data) {
				t.Errorf("Echo of %d bytes: got seq %d and %d bytes back", n, rsp.GetSeq(), len(rsp.GetData()))
			}
		})
	}
}

func TestTarsGoServerAsync(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)
	const calls = 300
	var wg sync.WaitGroup
	var ok atomic.Int64
	for i := range calls {
		data := job.Payload(i%2000, int64(i))
		wg.Add(1)
		err := prx.AsyncEcho(ctx, &echopb.EchoReq{Data: data, Seq: int64(i)}, func(rsp *echopb.EchoRsp, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("AsyncEcho %d: %v", i, err)
				return
			}
			if rsp.GetSeq() != int64(i) || !bytes.Equal(rsp.GetData(), data) {
				t.Errorf("AsyncEcho %d: reply of seq %d with %d bytes", i, rsp.GetSeq(), len(rsp.GetData()))
				return
			}
			ok.Add(1)
		})
		if err != nil {
			wg.Done()
			t.Fatalf("AsyncEcho %d not sent: %v", i, err)
		}
	}
	wg.Wait()
	if ok.Load() != calls {
		t.Fatalf("%d of %d async calls succeeded", ok.Load(), calls)
	}
	// A 4 MiB body through the async path too.
	big := job.Payload(4<<20, 99)
	done := make(chan error, 1)
	if err := prx.AsyncEcho(ctx, &echopb.EchoReq{Data: big}, func(rsp *echopb.EchoRsp, err error) {
		if err == nil && !bytes.Equal(rsp.GetData(), big) {
			err = errors.New("4 MiB reply differs")
		}
		done <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTarsGoServerOneway(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)
	tag := fmt.Sprintf("oneway-%d", time.Now().UnixNano())
	const n = 20
	for seq := range int64(n) {
		if err := prx.OnewayNote(ctx, &echopb.NoteReq{Tag: tag, Seq: seq}); err != nil {
			t.Fatalf("OnewayNote %d: %v", seq, err)
		}
	}
	// TarsGo runs each request on its own goroutine: the notes arrive in any order.
	var got []int64
	eventually(t, "the one-way notes reach the TarsGo server", func() bool {
		rsp, err := prx.Notes(ctx, &echopb.NotesReq{Tag: tag})
		if err != nil {
			t.Fatal(err)
		}
		got = rsp.GetSeqs()
		return len(got) >= n
	})
	seen := map[int64]bool{}
	for _, seq := range got {
		seen[seq] = true
	}
	if len(got) != n || len(seen) != n {
		t.Errorf("server recorded %v, want each of 0..%d once", got, n-1)
	}
}

func TestTarsGoServerContextStatus(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)
	reqCtx := map[string]string{"k": "v", "trace": strings.Repeat("x", 300)} // a 4-byte-length string too
	reqStatus := map[string]string{"s": "t"}
	var rspCtx, rspStatus map[string]string
	rsp, err := prx.Inspect(ctx, &echopb.InspectReq{},
		servantproxy.WithContext(reqCtx), servantproxy.WithStatus(reqStatus),
		servantproxy.WithResponseContext(&rspCtx), servantproxy.WithResponseStatus(&rspStatus))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(rsp.GetContext(), reqCtx) || !maps.Equal(rsp.GetStatus(), reqStatus) {
		t.Errorf("TarsGo saw context %v and status %v, want %v and %v", rsp.GetContext(), rsp.GetStatus(), reqCtx, reqStatus)
	}
	if want := map[string]string{"rsp-k": "v", "rsp-trace": reqCtx["trace"]}; !maps.Equal(rspCtx, want) {
		t.Errorf("reply context %v, want %v", rspCtx, want)
	}
	if want := map[string]string{"rsp-s": "t"}; !maps.Equal(rspStatus, want) {
		t.Errorf("reply status %v, want %v", rspStatus, want)
	}
	if rsp.GetVersion() != 1 || rsp.GetPacketType() != 0 || rsp.GetMessageType() != 0 ||
		rsp.GetServant() != tarsgoPbObj || rsp.GetFunc() != "Inspect" {
		t.Errorf("TarsGo saw version %d, packet type %d, message type %d, %s.%s; want 1, 0, 0, %s.Inspect",
			rsp.GetVersion(), rsp.GetPacketType(), rsp.GetMessageType(), rsp.GetServant(), rsp.GetFunc(), tarsgoPbObj)
	}
	// A hash code marks the request with the hash bit.
	rsp, err = prx.Inspect(ctx, &echopb.InspectReq{}, servantproxy.WithHash(7))
	if err != nil {
		t.Fatal(err)
	}
	if rsp.GetMessageType() != codec.MessageHash {
		t.Errorf("with WithHash TarsGo saw message type %#x, want %#x", rsp.GetMessageType(), codec.MessageHash)
	}
}

// TestTarsGoServerTimeout checks that the call's time left reaches TarsGo as iTimeout, that
// TarsGo gives its servant a context with that deadline, and that a call to a slow TarsGo
// servant ends with ErrTimeout at its deadline.
func TestTarsGoServerTimeout(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)

	rsp, err := prx.Inspect(ctx, &echopb.InspectReq{}, servantproxy.WithTimeout(800*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if ms := rsp.GetTimeoutMs(); ms < 700 || ms > 800 {
		t.Errorf("TarsGo saw iTimeout %d ms, want 700..800", ms)
	}
	if ms := rsp.GetDeadlineMs(); ms <= 0 || ms > 800 {
		t.Errorf("TarsGo's servant context had %d ms left, want 1..800", ms)
	}
	// Without an option the sync invoke timeout (3s by default) is sent.
	rsp, err = prx.Inspect(ctx, &echopb.InspectReq{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := rsp.GetTimeoutMs(); ms < 2900 || ms > 3000 {
		t.Errorf("TarsGo saw iTimeout %d ms, want about 3000", ms)
	}

	// A servant that honours the deadline TarsGo derives from our iTimeout stops sleeping at
	// about 300ms. Its reply arrives about when our deadline passes, so the call ends either
	// with ErrTimeout or with that reply.
	before := len(notes(t, prx, "sleep"))
	start := time.Now()
	sleep, err := prx.Sleep(ctx, &echopb.SleepReq{Ms: 5000}, servantproxy.WithTimeout(300*time.Millisecond))
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Sleep(5s) with a 300ms timeout took %v", elapsed)
	}
	if err != nil && !errors.Is(err, servantproxy.ErrTimeout) || err == nil && !sleep.GetInterrupted() {
		t.Errorf("Sleep(5s) with a 300ms timeout: %v, %v; want ErrTimeout or an interrupted sleep", sleep, err)
	}
	var slept []int64
	eventually(t, "the TarsGo servant ends its sleep", func() bool {
		slept = notes(t, prx, "sleep")
		return len(slept) > before
	})
	if ms := slept[before]; ms > 1000 {
		t.Errorf("the TarsGo servant slept %d ms: it did not honour iTimeout 300", ms)
	}

	// A servant that ignores its deadline: the call ends with ErrTimeout at our deadline.
	start = time.Now()
	_, err = prx.Sleep(ctx, &echopb.SleepReq{Ms: 1500, IgnoreDeadline: true}, servantproxy.WithTimeout(300*time.Millisecond))
	elapsed := time.Since(start)
	if !errors.Is(err, servantproxy.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sleep(1.5s, ignoring its deadline) with a 300ms timeout: %v, want ErrTimeout", err)
	}
	if elapsed < 290*time.Millisecond || elapsed > time.Second {
		t.Errorf("the call timed out after %v, want about 300ms", elapsed)
	}
	// The connection is still good after the late reply.
	if _, err := prx.Echo(ctx, &echopb.EchoReq{Seq: 1}); err != nil {
		t.Errorf("Echo after a timeout: %v", err)
	}
}

func notes(t *testing.T, prx *echopb.EchoProxy, tag string) []int64 {
	t.Helper()
	rsp, err := prx.Notes(testCtx(t), &echopb.NotesReq{Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	return rsp.GetSeqs()
}

func TestTarsGoServerPing(t *testing.T) {
	s := sharedTarsGoServer(t)
	comm := newComm(t)
	ctx := testCtx(t)
	if err := echoProxy(t, comm, s).ServantProxy().Ping(ctx); err != nil {
		t.Errorf("tars_ping to the protobuf servant: %v", err)
	}
	if err := tarsProxy(t, comm, s).Ping(ctx); err != nil {
		t.Errorf("tars_ping to the .tars servant: %v", err)
	}
}

// TestTarsGoServerErrors checks that TarsGo's error answers surface as *ServerError with
// TarsGo's code and description.
func TestTarsGoServerErrors(t *testing.T) {
	s := sharedTarsGoServer(t)
	comm := newComm(t)
	prx := echoProxy(t, comm, s)
	sp := prx.ServantProxy()
	ctx := testCtx(t)

	// TarsGo quirk: an unknown function is answered with iRet 1 and "func mismatch" (the
	// error its generated Dispatch returns), not with -3 (RetNoFunc) as TarsCpp does.
	_, err := sp.InvokeRaw(ctx, "NoSuchFunc", nil)
	if se := serverError(t, "unknown function", err); se.Code != 1 || se.Desc != "func mismatch" {
		t.Errorf("unknown function: code %d %q, want 1 \"func mismatch\"", se.Code, se.Desc)
	}
	_, err = tarsProxy(t, comm, s).InvokeRaw(ctx, "nosuchfunc", nil)
	if se := serverError(t, "unknown .tars function", err); se.Code != 1 || se.Desc != "func mismatch" {
		t.Errorf("unknown .tars function: code %d %q, want 1 \"func mismatch\"", se.Code, se.Desc)
	}

	// TarsGo quirk: a body that does not unmarshal is answered with iRet 1 and the protobuf
	// error, not with -1 (RetServerDecode).
	_, err = sp.InvokeRaw(ctx, "Echo", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	if se := serverError(t, "undecodable body", err); se.Code != 1 || !strings.Contains(se.Desc, "proto") {
		t.Errorf("undecodable body: code %d %q, want 1 and a protobuf error", se.Code, se.Desc)
	}
	_, err = tarsProxy(t, comm, s).InvokeRaw(ctx, tarsidl.FuncEcho, []byte{0x1d, 0x00}) // a truncated vector<byte>
	if se := serverError(t, "undecodable .tars body", err); se.Code != 1 || se.Desc == "" {
		t.Errorf("undecodable .tars body: code %d %q, want 1 and a description", se.Code, se.Desc)
	}

	// A *tars.Error returned by a TarsGo servant: its code is iRet, its text sResultDesc.
	for _, code := range []int32{7, -9, 100000} {
		_, err = prx.Fail(ctx, &echopb.FailReq{Code: code, Desc: "failed on purpose"})
		if se := serverError(t, "Fail", err); se.Code != code || se.Desc != "failed on purpose" {
			t.Errorf("Fail(%d): code %d %q, want %d \"failed on purpose\"", code, se.Code, se.Desc, code)
		}
	}
	// The same error through the async path.
	done := make(chan error, 1)
	if err := prx.AsyncFail(ctx, &echopb.FailReq{Code: 7, Desc: "async"}, func(_ *echopb.FailRsp, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if se := serverError(t, "AsyncFail", <-done); se.Code != 7 || se.Desc != "async" {
		t.Errorf("AsyncFail: code %d %q, want 7 \"async\"", se.Code, se.Desc)
	}
}

// TestTarsGoServerIgnoresServantName documents a TarsGo quirk: a TarsGo server dispatches
// every request of a port to the servant of that port, whatever sServantName says, where
// TarsCpp (and tarscomm's server) answer -4 (RetNoServant).
func TestTarsGoServerIgnoresServantName(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := new(echopb.EchoProxy)
	if err := newComm(t).StringToProxy("No.Such.ServantObj@"+s.pbEndpoint(), prx); err != nil {
		t.Fatal(err)
	}
	rsp, err := prx.Inspect(testCtx(t), &echopb.InspectReq{})
	if err != nil {
		t.Fatalf("call to an unknown servant name: %v; TarsGo used to serve it anyway", err)
	}
	if rsp.GetServant() != "No.Such.ServantObj" {
		t.Errorf("TarsGo saw servant %q", rsp.GetServant())
	}
}

// TestTarsGoServerTarsIDL calls the .tars-style servant with TARS-encoded bodies (tarsidl,
// over tarscomm's codec) through InvokeRaw and AsyncInvokeRaw.
func TestTarsGoServerTarsIDL(t *testing.T) {
	s := sharedTarsGoServer(t)
	sp := tarsProxy(t, newComm(t), s)
	ctx := testCtx(t)
	for i, n := range sizes {
		data := job.Payload(n, int64(i))
		body, err := sp.InvokeRaw(ctx, tarsidl.FuncEcho, tarsidl.EncodeEcho(data))
		if err != nil {
			t.Fatalf("echo of %d bytes: %v", n, err)
		}
		ret, out, err := tarsidl.DecodeEchoReply(body)
		if err != nil || ret != 0 || !bytes.Equal(out, data) {
			t.Errorf("echo of %d bytes: ret %d, %d bytes back, err %v", n, ret, len(out), err)
		}
	}
	checkSum(t, ctx, sp, []int32{1, -2, 1 << 30, 1 << 30, 7}, "label")
	done := make(chan error, 1)
	data := job.Payload(1000, 5)
	if err := sp.AsyncInvokeRaw(ctx, tarsidl.FuncEcho, tarsidl.EncodeEcho(data), func(body []byte, err error) {
		if err == nil {
			var out []byte
			_, out, err = tarsidl.DecodeEchoReply(body)
			if err == nil && !bytes.Equal(out, data) {
				err = errors.New("async echo: reply differs")
			}
		}
		done <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	// The deadline reaches a .tars servant too: sleep returns 1 when its context (whose
	// deadline TarsGo derives from iTimeout) ended first. The reply arrives about when our
	// deadline passes: the call ends with it or with ErrTimeout, at about 200ms.
	start := time.Now()
	body, err := sp.InvokeRaw(ctx, tarsidl.FuncSleep, tarsidl.EncodeSleep(3000), servantproxy.WithTimeout(200*time.Millisecond))
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("sleep(3000) with a 200ms timeout took %v", elapsed)
	}
	if err == nil {
		if ret, derr := codec.NewDecoder(body).ReadInt32(0, true); derr != nil || ret != 1 {
			t.Errorf("sleep(3000) with a 200ms timeout returned %d (%v), want 1: interrupted", ret, derr)
		}
	} else if !errors.Is(err, servantproxy.ErrTimeout) {
		t.Errorf("sleep(3000) with a 200ms timeout: %v", err)
	}
}

// TestTarsGoServerEndpoints puts several TarsGo servers in one proxy string: calls spread over
// all of them, and calls with one hash code stick to one.
func TestTarsGoServerEndpoints(t *testing.T) {
	servers := []*tarsgoServer{sharedTarsGoServer(t), startTarsGoServer(t, "b"), startTarsGoServer(t, "c")}
	eps := make([]string, len(servers))
	for i, s := range servers {
		eps[i] = s.pbEndpoint()
	}
	prx := new(echopb.EchoProxy)
	if err := newComm(t).StringToProxy(tarsgoPbObj+"@"+strings.Join(eps, ":"), prx); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	count := map[string]int{}
	for range 60 {
		rsp, err := prx.Inspect(ctx, &echopb.InspectReq{})
		if err != nil {
			t.Fatal(err)
		}
		count[rsp.GetServerId()]++
	}
	for _, s := range servers {
		if count[s.id] < 10 {
			t.Errorf("round-robin over 3 endpoints: calls per server %v, want about 20 each", count)
			break
		}
	}
	hashed := map[string]int{}
	for range 20 {
		rsp, err := prx.Inspect(ctx, &echopb.InspectReq{}, servantproxy.WithHash(12345))
		if err != nil {
			t.Fatal(err)
		}
		hashed[rsp.GetServerId()]++
	}
	if len(hashed) != 1 {
		t.Errorf("calls with one hash code went to %v, want one server", hashed)
	}
}
