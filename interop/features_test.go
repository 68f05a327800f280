package interop_test

// The features beyond a plain call, against TarsGo v1.4.6, both ways: the reply's maps on the
// async and future paths, dyeing, set calls, TARS's trace key, one-way calls, late replies and
// timeouts, and the handler errors the other tests leave out. TarsGo's source is cited as
// tars/<file>:<line> of github.com/TarsCloud/TarsGo@v1.4.6.
//
// No test here asserts how fast anything happened: a bound on a duration is either what the
// code guarantees (a call with a 250 ms timeout does not end before it) or a liveness bound of
// seconds.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tgprotocol "github.com/TarsCloud/TarsGo/tars/protocol"
	tgrequestf "github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
	"github.com/tarscomm/tarscomm/tracekey"
)

// newComm1 is newComm with one net thread: every call to an endpoint shares one connection.
// Each tweak changes the configuration first.
func newComm1(t *testing.T, tweaks ...func(*conf.Config)) *communicator.Communicator {
	t.Helper()
	cfg := conf.Default()
	cfg.NetThread = 1
	for _, tw := range tweaks {
		tw(&cfg)
	}
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", c.Close) })
	return c
}

// keepEndpointsActive sets health thresholds no test here reaches: a timed-out call does not
// take the endpoint out, so the client sends no health probe (tars_ping, 500 ms to answer)
// that a busy server may leave unanswered, and the connection is not replaced while the late
// replies a test counts are still to come on it.
func keepEndpointsActive(c *conf.Config) {
	c.Health.FrequentFailInvoke = 1000
	c.Health.MinTimeoutInvoke = 1000
}

// tgConn is a TCP connection on which requests are packed and replies unpacked by TarsGo's own
// client code (tars/protocol), as a TarsGo client's TarsInvoke writes them.
type tgConn struct {
	t *testing.T
	c net.Conn
	p tgprotocol.TarsProtocol
}

func dialTG(t *testing.T, port int) *tgConn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &tgConn{t: t, c: c}
}

func (g *tgConn) send(req *tgrequestf.RequestPacket) {
	g.t.Helper()
	b, err := g.p.RequestPack(req)
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.c.Write(b); err != nil {
		g.t.Fatal(err)
	}
}

// next reads one reply within d; nil if none came.
func (g *tgConn) next(d time.Duration) *tgrequestf.ResponsePacket {
	g.t.Helper()
	_ = g.c.SetReadDeadline(time.Now().Add(d))
	var hdr [4]byte
	if _, err := io.ReadFull(g.c, hdr[:]); err != nil {
		return nil
	}
	frame := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	copy(frame, hdr[:])
	if _, err := io.ReadFull(g.c, frame[4:]); err != nil {
		g.t.Fatalf("truncated reply: %v", err)
	}
	rsp, err := g.p.ResponseUnpack(frame)
	if err != nil {
		g.t.Fatalf("TarsGo's client cannot decode the reply %x: %v", frame, err)
	}
	return rsp
}

func int8s(b []byte) []int8 {
	out := make([]int8, len(b))
	for i, c := range b {
		out[i] = int8(c)
	}
	return out
}

func bytesOf(b []int8) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = byte(c)
	}
	return out
}

func pb(t *testing.T, m proto.Message) []int8 {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return int8s(b)
}

// ---------------------------------------------------------------------------------------------
// 1. Context and status: the reply's maps on the async and future paths.

// TestFeatureResponseMapsAsyncFuture guards that the request's context and status reach a TarsGo
// handler (tars/tarsprotocol.go:106-111 puts them in its current) and the maps it answers with
// SetResponseContext/Status reach tarscomm's async callback and future, as README ("Futures")
// says they reach all three call paths.
func TestFeatureResponseMapsAsyncFuture(t *testing.T) {
	prx := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	ctx := testCtx(t)
	reqCtx := map[string]string{"a": "1", "empty": ""}
	reqSt := map[string]string{"s": "2"}
	wantCtx := map[string]string{"rsp-a": "1", "rsp-empty": ""}
	wantSt := map[string]string{"rsp-s": "2"}

	var aCtx, aSt map[string]string
	done := make(chan error, 1)
	var aRsp *echopb.InspectRsp
	if err := prx.AsyncInspect(ctx, &echopb.InspectReq{}, func(r *echopb.InspectRsp, err error) {
		aRsp = r
		done <- err
	}, servantproxy.WithContext(reqCtx), servantproxy.WithStatus(reqSt),
		servantproxy.WithResponseContext(&aCtx), servantproxy.WithResponseStatus(&aSt)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AsyncInspect: %v", err)
	}
	if !maps.Equal(aRsp.GetContext(), reqCtx) || !maps.Equal(aRsp.GetStatus(), reqSt) {
		t.Errorf("async: TarsGo saw context %v status %v, want %v %v", aRsp.GetContext(), aRsp.GetStatus(), reqCtx, reqSt)
	}
	if !maps.Equal(aCtx, wantCtx) || !maps.Equal(aSt, wantSt) {
		t.Errorf("async: reply context %v status %v, want %v %v", aCtx, aSt, wantCtx, wantSt)
	}

	var fCtx, fSt map[string]string
	f := prx.FutureInspect(ctx, &echopb.InspectReq{}, servantproxy.WithContext(reqCtx), servantproxy.WithStatus(reqSt),
		servantproxy.WithResponseContext(&fCtx), servantproxy.WithResponseStatus(&fSt))
	fRsp, err := f.Get(ctx)
	if err != nil {
		t.Fatalf("FutureInspect: %v", err)
	}
	if !maps.Equal(fRsp.GetContext(), reqCtx) || !maps.Equal(fCtx, wantCtx) || !maps.Equal(fSt, wantSt) {
		t.Errorf("future: TarsGo saw %v; reply context %v status %v, want %v %v", fRsp.GetContext(), fCtx, fSt, wantCtx, wantSt)
	}
}

// ---------------------------------------------------------------------------------------------
// 2. Dyeing.

// TestFeatureDyeToTarsGoCurrent guards that a call dyed through its ctx (dye.WithKey) reaches
// TarsGo with iMessageType 0x04 and STATUS_DYED_KEY, so TarsGo's current holds the key
// (tars/tarsprotocol.go:62-67, tars/util/current/tarscurrent.go:223-233), without changing the
// caller's status map. An undyed call carries neither.
func TestFeatureDyeToTarsGoCurrent(t *testing.T) {
	prx := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	ctx := testCtx(t)
	var rspSt map[string]string
	st := map[string]string{"mine": "x"}
	r, err := prx.Inspect(dye.WithKey(ctx, "user-42"), &echopb.InspectReq{},
		servantproxy.WithStatus(st), servantproxy.WithResponseStatus(&rspSt))
	if err != nil {
		t.Fatal(err)
	}
	if r.GetMessageType()&codec.MessageDyed == 0 || r.GetStatus()["STATUS_DYED_KEY"] != "user-42" || r.GetStatus()["mine"] != "x" {
		t.Errorf("dyed by ctx: TarsGo saw message type %#x status %v", r.GetMessageType(), r.GetStatus())
	}
	if rspSt["rsp-STATUS_DYED_KEY"] != "user-42" {
		t.Errorf("TarsGo's current has no dyeing key: reply status %v", rspSt)
	}
	if len(st) != 1 {
		t.Errorf("the caller's status map was changed: %v", st)
	}
	r, err = prx.Inspect(ctx, &echopb.InspectReq{})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetMessageType()&codec.MessageDyed != 0 || r.GetStatus()["STATUS_DYED_KEY"] != "" {
		t.Errorf("undyed call: TarsGo saw message type %#x status %v", r.GetMessageType(), r.GetStatus())
	}
}

// relayServer is a tarscomm server whose handlers record what they were called with and call
// the TarsGo server on with their ctx: "Inspect" with a sync call, "InspectAsync" with an async
// one (the handler waits for its callback).
type relayServer struct {
	port int
	mu   sync.Mutex
	seen []relaySeen
}

type relaySeen struct {
	dyed       bool
	dyeKey     string
	ctxDye     string
	ctxDyed    bool
	traceID    string
	traced     bool
	msgType    int32
	status     map[string]string
	packetType int8
}

const relayObj = "Interop.TarscommServer.RelayObj"

func startRelay(t *testing.T, down *echopb.EchoProxy) *relayServer {
	t.Helper()
	rs := &relayServer{}
	s := server.New(server.WithWorkers(4), server.WithLogger(zaptest.NewLogger(t).Named("relay")))
	record := func(ctx context.Context, cur *server.Current) {
		k, ok := dye.FromContext(ctx)
		id, traced := tracekey.FromContext(ctx)
		rs.mu.Lock()
		rs.seen = append(rs.seen, relaySeen{dyed: cur.Dyed, dyeKey: cur.DyeingKey, ctxDye: k, ctxDyed: ok,
			traceID: id, traced: traced, msgType: cur.MessageType, status: maps.Clone(cur.Status), packetType: cur.PacketType})
		rs.mu.Unlock()
	}
	if err := server.HandleProto(s, relayObj, "Inspect", func(ctx context.Context, cur *server.Current, req *echopb.InspectReq) (*echopb.InspectRsp, error) {
		record(ctx, cur)
		return down.Inspect(ctx, req)
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.HandleProto(s, relayObj, "InspectAsync", func(ctx context.Context, cur *server.Current, req *echopb.InspectReq) (*echopb.InspectRsp, error) {
		record(ctx, cur)
		type res struct {
			r   *echopb.InspectRsp
			err error
		}
		ch := make(chan res, 1)
		if err := down.AsyncInspect(ctx, req, func(r *echopb.InspectRsp, err error) { ch <- res{r, err} }); err != nil {
			return nil, err
		}
		x := <-ch
		return x.r, x.err
	}); err != nil {
		t.Fatal(err)
	}
	rs.port = serve(t, s, "127.0.0.1:0", "relay")
	return rs
}

func (rs *relayServer) last(t *testing.T) relaySeen {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.seen) == 0 {
		t.Fatal("the relay handler never ran")
	}
	return rs.seen[len(rs.seen)-1]
}

// relayVia sends req (packed by TarsGo) to the relay and returns the TarsGo servant's
// InspectRsp that came back through it.
func relayVia(t *testing.T, rs *relayServer, req *tgrequestf.RequestPacket) *echopb.InspectRsp {
	t.Helper()
	g := dialTG(t, rs.port)
	g.send(req)
	rsp := g.next(10 * time.Second)
	if rsp == nil {
		t.Fatalf("%s: no reply from the relay within 10s", req.SFuncName)
	}
	if rsp.IRet != 0 || rsp.IRequestId != req.IRequestId {
		t.Fatalf("%s: reply id %d ret %d %q", req.SFuncName, rsp.IRequestId, rsp.IRet, rsp.SResultDesc)
	}
	var ir echopb.InspectRsp
	if err := proto.Unmarshal(bytesOf(rsp.SBuffer), &ir); err != nil {
		t.Fatal(err)
	}
	return &ir
}

// TestFeatureDyeFromTarsGoClient guards that a request dyed as TarsGo's TarsInvoke dyes it
// (tars/servant.go:126-133: STATUS_DYED_KEY, iMessageType |= 0x04) reaches a tarscomm handler as
// dyed (Current.Dyed, Current.DyeingKey, dye.FromContext), and that the handler's sync and async
// calls to TarsGo with its ctx carry the same key.
func TestFeatureDyeFromTarsGoClient(t *testing.T) {
	down := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	rs := startRelay(t, down)
	for i, fn := range []string{"Inspect", "InspectAsync"} {
		t.Run(fn, func(t *testing.T) {
			ir := relayVia(t, rs, &tgrequestf.RequestPacket{IVersion: 1, IRequestId: int32(10 + i), SServantName: relayObj, SFuncName: fn,
				SBuffer: pb(t, &echopb.InspectReq{}), ITimeout: 3000, IMessageType: 0x04, Status: map[string]string{"STATUS_DYED_KEY": "u-7"}})
			seen := rs.last(t)
			if !seen.dyed || seen.dyeKey != "u-7" || !seen.ctxDyed || seen.ctxDye != "u-7" {
				t.Errorf("tarscomm handler: Dyed %v DyeingKey %q, ctx dyed %v key %q; want true u-7", seen.dyed, seen.dyeKey, seen.ctxDyed, seen.ctxDye)
			}
			if ir.GetMessageType()&codec.MessageDyed == 0 || ir.GetStatus()["STATUS_DYED_KEY"] != "u-7" {
				t.Errorf("relayed call: TarsGo saw message type %#x status %v, want dyed u-7", ir.GetMessageType(), ir.GetStatus())
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// 3. Set calls.

// TestFeatureSetNameToTarsGo guards that set calls (enableset with setdivision app.sz.1 through
// devregistry, dyed or not, and ProxyWithSet) put on the wire what TarsCpp's ServantProxy::invoke
// puts (servant/libservant/ServantProxy.cpp:921-925 of TarsCloud/TarsCpp): iMessageType bit 0x80
// (TarsGo's basef.TARSMESSAGETYPESETNAME, tars/protocol/res/basef/BaseF.go:46) and
// status[STATUS_SETNAME_VALUE] beside the caller's own entries, which TarsCpp's servers check
// (ServantHandle.cpp:468-527) and TarsGo's hands to the servant.
func TestFeatureSetNameToTarsGo(t *testing.T) {
	s := sharedTarsGoServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "objs.toml")
	content := fmt.Sprintf("[objects]\n%q = [%q]\n", tarsgoPbObj, s.pbEndpoint()+" -s app.sz.1")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := devregistry.Start(devregistry.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = closetest.Within(t, "registry Close", func() error { return reg.Close(context.Background()) })
	})
	cfg, err := conf.Parse(fmt.Appendf(nil, "log-level = \"error\"\nlocator = %q\nenableset = true\nsetdivision = \"app.sz.1\"\n", reg.Locator()))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	ctx := testCtx(t)

	prx := new(echopb.EchoProxy)
	if err := comm.StringToProxy(tarsgoPbObj, prx); err != nil {
		t.Fatal(err)
	}
	st := map[string]string{"mine": "x"}
	r, err := prx.Inspect(ctx, &echopb.InspectReq{}, servantproxy.WithStatus(st))
	if err != nil {
		t.Fatalf("set call through the registry: %v", err)
	}
	if r.GetMessageType()&codec.MessageSetName == 0 || r.GetStatus()["STATUS_SETNAME_VALUE"] != "app.sz.1" || r.GetStatus()["mine"] != "x" {
		t.Errorf("enableset: TarsGo saw message type %#x status %v; want bit 0x80 and STATUS_SETNAME_VALUE app.sz.1", r.GetMessageType(), r.GetStatus())
	}
	if len(st) != 1 {
		t.Errorf("the caller's status map was changed: %v", st)
	}
	// Dyed and set at once: both bits, both keys.
	r, err = prx.Inspect(ctx, &echopb.InspectReq{}, servantproxy.WithDyeing("d"))
	if err != nil {
		t.Fatal(err)
	}
	if mt := r.GetMessageType(); mt&codec.MessageSetName == 0 || mt&codec.MessageDyed == 0 ||
		r.GetStatus()["STATUS_SETNAME_VALUE"] != "app.sz.1" || r.GetStatus()["STATUS_DYED_KEY"] != "d" {
		t.Errorf("set and dyed: TarsGo saw message type %#x status %v", mt, r.GetStatus())
	}

	sp, err := comm.ProxyWithSet(tarsgoPbObj, "app.sz.*")
	if err != nil {
		t.Fatal(err)
	}
	p2 := new(echopb.EchoProxy)
	p2.SetServantProxy(sp)
	r, err = p2.Inspect(ctx, &echopb.InspectReq{})
	if err != nil {
		t.Fatalf("ProxyWithSet: %v", err)
	}
	if r.GetMessageType()&codec.MessageSetName == 0 || r.GetStatus()["STATUS_SETNAME_VALUE"] != "app.sz.*" {
		t.Errorf("ProxyWithSet(app.sz.*): TarsGo saw message type %#x status %v", r.GetMessageType(), r.GetStatus())
	}
}

// ---------------------------------------------------------------------------------------------
// 4. TARS's trace key.

var spanRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// TestFeatureTraceKeyToTarsGo guards that a call traced with tracekey.WithTraceID carries
// iMessageType 0x100 and a two-part STATUS_TRACE_KEY "<traceID>|<span>" that TarsGo's server
// accepts (tars/tarsprotocol.go:71-77 → tars/util/trace/trace.go:84-91).
func TestFeatureTraceKeyToTarsGo(t *testing.T) {
	prx := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	const id = "f-0123456789abcdef0123456789abcdef"
	r, err := prx.Inspect(tracekey.WithTraceID(testCtx(t), id), &echopb.InspectReq{})
	if err != nil {
		t.Fatal(err)
	}
	key := r.GetStatus()["STATUS_TRACE_KEY"]
	parts := strings.Split(key, "|")
	if r.GetMessageType()&codec.MessageTrace == 0 || len(parts) != 2 || parts[0] != id || !spanRE.MatchString(parts[1]) {
		t.Errorf("TarsGo saw message type %#x STATUS_TRACE_KEY %q; want bit 0x100 and %s|<16 hex>", r.GetMessageType(), key, id)
	}
	// TarsGo logs InitTarsTrace's failure at ERROR (tars/tarsprotocol.go:74-76).
	if out := sharedTarsGoServer(t).out.String(); strings.Contains(out, "trace-debug") {
		t.Errorf("TarsGo could not take the trace key:\n%s", out)
	}
}

// TestFeatureTraceKeyFromTarsGo guards that the trace keys TarsGo's TarsInvoke sends
// (tars/servant.go:136-143, tars/util/trace/trace.go:141-146: "traceID|spanID", spanID "" in
// v1.4.6) and TarsCpp's three-part key reach a tarscomm handler as traced with that trace id, and
// that the handler's calls to TarsGo carry the bit and "<traceID>|<a new span>".
func TestFeatureTraceKeyFromTarsGo(t *testing.T) {
	down := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	rs := startRelay(t, down)
	const id = "f-5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	for i, key := range []string{id + "|", id + "|00000000000000aa", id + "|00000000000000aa|00000000000000bb"} {
		t.Run(strconv.Itoa(len(strings.Split(key, "|")))+"parts-"+strconv.Itoa(i), func(t *testing.T) {
			ir := relayVia(t, rs, &tgrequestf.RequestPacket{IVersion: 1, IRequestId: int32(20 + i), SServantName: relayObj, SFuncName: "Inspect",
				SBuffer: pb(t, &echopb.InspectReq{}), ITimeout: 3000, IMessageType: 0x100, Status: map[string]string{"STATUS_TRACE_KEY": key}})
			seen := rs.last(t)
			if !seen.traced || seen.traceID != id {
				t.Errorf("request key %q: tarscomm handler traced %v id %q, want %s", key, seen.traced, seen.traceID, id)
			}
			got := ir.GetStatus()["STATUS_TRACE_KEY"]
			parts := strings.Split(got, "|")
			if ir.GetMessageType()&codec.MessageTrace == 0 || len(parts) != 2 || parts[0] != id || !spanRE.MatchString(parts[1]) {
				t.Errorf("request key %q: relayed call carried message type %#x key %q", key, ir.GetMessageType(), got)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// 5. One-way calls.

// clockSlop is how much earlier than its configured time a timeout may be seen to end, measured
// from outside the call (timer and clock granularity).
const clockSlop = 20 * time.Millisecond

// endpointStats sums the endpoint rows of servant in snap.
func endpointStats(snap stats.Snapshot, servant string) (e stats.Endpoint) {
	for _, x := range snap.Endpoints {
		if x.Servant == servant {
			e.AddCounts(x)
			e.Pending += x.Pending
		}
	}
	return e
}

func lateReplies(snap stats.Snapshot) (n uint64) {
	for _, th := range snap.Threads {
		n += th.LateReplies
	}
	return n
}

// TestFeatureOnewayToTarsGoNothingPending guards that one-way calls to TarsGo (OnewayNote,
// InvokeOnewayRaw, a failing OnewayFail) arrive and are counted as sent but leave no call pending,
// no late reply (TarsGo writes none: tars/transport/tcphandler.go:80-86) and no result in the call
// stats (README: "a one-way call that was sent has no result").
func TestFeatureOnewayToTarsGoNothingPending(t *testing.T) {
	comm := newComm1(t)
	prx := echoProxy(t, comm, sharedTarsGoServer(t))
	ctx := testCtx(t)
	tag := fmt.Sprintf("feature-oneway-%d", time.Now().UnixNano())
	const n = 10
	for seq := range int64(n) {
		if err := prx.OnewayNote(ctx, &echopb.NoteReq{Tag: tag, Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := proto.Marshal(&echopb.NoteReq{Tag: tag, Seq: n})
	if err := prx.ServantProxy().InvokeOnewayRaw(ctx, "Note", body); err != nil {
		t.Fatal(err)
	}
	if err := prx.OnewayFail(ctx, &echopb.FailReq{Code: 5, Desc: "one-way failure"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the one-way notes reach TarsGo", func() bool { return len(notes(t, prx, tag)) == n+1 })
	// Not a wait for anything to happen: TarsGo runs each request on its own goroutine and the
	// one-way Fail leaves no trace, so this short pause only gives a reply to it, which must
	// not come, a chance to show before the stats are read.
	time.Sleep(100 * time.Millisecond)
	if _, err := prx.Echo(ctx, &echopb.EchoReq{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	snap := comm.Stats()
	e := endpointStats(snap, tarsgoPbObj)
	if e.Pending != 0 || e.Late != 0 || lateReplies(snap) != 0 {
		t.Errorf("after the one-way calls: pending %d, late %d (threads %d), want 0", e.Pending, e.Late, lateReplies(snap))
	}
	if want := uint64(n + 2 + 1 + 1); e.Sent < want { // the one-way calls, the Notes polls, the Echo
		t.Errorf("endpoint sent %d calls, want at least %d", e.Sent, want)
	}
	for _, c := range snap.Calls {
		if c.Servant == tarsgoPbObj && (c.Function == "Note" || c.Function == "Fail") {
			t.Errorf("one-way %s has results in the call stats: %+v", c.Function, c.Counters)
		}
	}
}

// TestFeatureOnewayToTarscommNoReply guards that tarscomm's server answers no one-way request
// packed by TarsGo's client (cPacketType 1), whether served, failed, to an unknown function or
// servant, or undecodable, as TarsCpp's (servant/libservant/Current.cpp:222-231, 268-276 of
// TarsCpp) and TarsGo's servers (tars/transport/tcphandler.go:80-86) answer none.
func TestFeatureOnewayToTarscommNoReply(t *testing.T) {
	s := startTarscommServer(t, "oneway")
	g := dialTG(t, s.port)
	noteBody := pb(t, &echopb.NoteReq{Tag: "ow", Seq: 1})
	for i, r := range []struct {
		obj, fn string
		body    []int8
	}{
		{tarscommPbObj, "Note", noteBody},
		{tarscommPbObj, "Fail", pb(t, &echopb.FailReq{Code: 9, Desc: "x"})},
		{tarscommPbObj, "NoSuchFunc", noteBody},
		{"No.Such.ServantObj", "Note", noteBody},
		{tarscommPbObj, "Note", []int8{0x0a, -1, -1, -1, -1, 0x0f}},
	} {
		g.send(&tgrequestf.RequestPacket{IVersion: 1, CPacketType: 1, IRequestId: int32(100 + i), SServantName: r.obj, SFuncName: r.fn,
			SBuffer: r.body, ITimeout: 3000})
	}
	g.send(&tgrequestf.RequestPacket{IVersion: 1, IRequestId: 7, SServantName: tarscommPbObj, SFuncName: codec.FuncPing, ITimeout: 3000})
	rsp := g.next(10 * time.Second)
	if rsp == nil || rsp.IRequestId != 7 || rsp.IRet != 0 {
		t.Fatalf("first reply %+v, want the ping's (id 7, ret 0 within 10s): a one-way request was answered", rsp)
	}
	eventually(t, "the one-way note is served", func() bool { return len(s.echo.recorded("ow")) == 1 })
	// Not a wait for anything to happen: a short read that gives a reply to one of the one-way
	// requests, which must not come, a chance to show.
	if extra := g.next(300 * time.Millisecond); extra != nil {
		t.Errorf("a reply after the ping's: %+v", extra)
	}
}

// ---------------------------------------------------------------------------------------------
// 6. Timeouts.

// TestFeatureLateReplyFromTarsGo guards that a sync or async call whose TarsGo servant answers
// after its deadline ends with ErrTimeout, and that the late reply (TarsGo answers every two-way
// call: tars/transport/tcphandler.go:78-90) is dropped and counted once (README "Replies for
// unknown or timed-out request ids are dropped; they are counted") while the calls made meanwhile
// on the same connection get their own replies.
func TestFeatureLateReplyFromTarsGo(t *testing.T) {
	// The servant sleeps well past the timeout, so that its reply comes late even if this
	// process is descheduled for a while around the deadline.
	const lateSleepMs, lateTimeout = 1500, 250 * time.Millisecond
	comm := newComm1(t, keepEndpointsActive)
	prx := echoProxy(t, comm, sharedTarsGoServer(t))
	ctx := testCtx(t)
	if _, err := prx.Echo(ctx, &echopb.EchoReq{}); err != nil {
		t.Fatal(err)
	}
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "async"}[async], func(t *testing.T) {
			before := comm.Stats()
			// Echo calls on the same connection, before, during and after the late reply.
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var bad sync.Map
			for g := range 4 {
				wg.Go(func() {
					for i := int64(0); ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						seq := int64(g)<<32 | i
						data := job.Payload(int(i%300), seq)
						r, err := prx.Echo(ctx, &echopb.EchoReq{Data: data, Seq: seq})
						if err != nil || r.GetSeq() != seq || string(r.GetData()) != string(data) {
							bad.Store(seq, fmt.Sprintf("seq %d: got seq %d, err %v", seq, r.GetSeq(), err))
						}
					}
				})
			}
			start := time.Now()
			var err error
			if async {
				done := make(chan error, 2)
				if e := prx.AsyncSleep(ctx, &echopb.SleepReq{Ms: lateSleepMs, IgnoreDeadline: true}, func(_ *echopb.SleepRsp, err error) { done <- err },
					servantproxy.WithTimeout(lateTimeout)); e != nil {
					t.Fatal(e)
				}
				err = <-done
				defer func() {
					select {
					case e := <-done:
						t.Errorf("async callback ran twice, second with %v", e)
					default:
					}
				}()
			} else {
				_, err = prx.Sleep(ctx, &echopb.SleepReq{Ms: lateSleepMs, IgnoreDeadline: true}, servantproxy.WithTimeout(lateTimeout))
			}
			elapsed := time.Since(start)
			if !errors.Is(err, servantproxy.ErrTimeout) {
				t.Errorf("Sleep(%dms) with a %v timeout: %v, want ErrTimeout", lateSleepMs, lateTimeout, err)
			}
			// Not before its timeout (less clock slop); how much later is not asserted.
			if elapsed < lateTimeout-clockSlop {
				t.Errorf("the call ended after %v, before its %v timeout", elapsed, lateTimeout)
			}
			eventually(t, "TarsGo's late reply is read and counted", func() bool {
				s := comm.Stats()
				return endpointStats(s, tarsgoPbObj).Late > endpointStats(before, tarsgoPbObj).Late && lateReplies(s) > lateReplies(before)
			})
			close(stop)
			wg.Wait()
			bad.Range(func(_, v any) bool { t.Error(v); return true })

			after := comm.Stats()
			eb, ea := endpointStats(before, tarsgoPbObj), endpointStats(after, tarsgoPbObj)
			if d := ea.Late - eb.Late; d != 1 {
				t.Errorf("endpoint Late went up by %d, want 1", d)
			}
			if d := lateReplies(after) - lateReplies(before); d != 1 {
				t.Errorf("net thread LateReplies went up by %d, want 1", d)
			}
			if d := ea.Timeouts - eb.Timeouts; d != 1 {
				t.Errorf("endpoint Timeouts went up by %d, want 1", d)
			}
			if ea.Pending != 0 {
				t.Errorf("%d calls pending at the end", ea.Pending)
			}
		})
	}
}

// TestFeatureAsyncTimeoutOnWire guards that the iTimeout sent is the time the caller will wait:
// the async-invoke-timeout (5000 by default, as TarsCpp sends for async calls: ServantProxy.cpp:903
// of TarsCpp) for an async call, the ctx's time left (as TarsGo: tars/servant.go:173-175) when the
// ctx ends first. TarsGo's servant takes its deadline from it (tars/tarsprotocol.go:54-60).
func TestFeatureAsyncTimeoutOnWire(t *testing.T) {
	prx := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	ctx := testCtx(t)
	// iTimeout is the time left when the request went out, rounded up to whole milliseconds: at
	// most the timeout, and at least the timeout less the whole call's duration (less clock
	// slop). How long the call took is not asserted.
	start := time.Now()
	f := prx.FutureInspect(ctx, &echopb.InspectReq{})
	r, err := f.Get(ctx)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if ms, low := r.GetTimeoutMs(), (5*time.Second - took - clockSlop).Milliseconds(); ms > 5000 || int64(ms) < low {
		t.Errorf("async call that took %v: TarsGo saw iTimeout %d, want %d..5000 (async-invoke-timeout)", took, ms, low)
	}
	// A ctx that ends before the sync-invoke-timeout (3 s by default).
	const left = 2 * time.Second
	short, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	dl, _ := short.Deadline()
	r, err = prx.Inspect(short, &echopb.InspectReq{})
	leftAfter := time.Until(dl)
	if err != nil {
		t.Fatal(err)
	}
	ms := r.GetTimeoutMs()
	if low := (leftAfter - clockSlop).Milliseconds(); ms > int32(left.Milliseconds()) || int64(ms) < low {
		t.Errorf("ctx with %v left: TarsGo saw iTimeout %d, want %d..%d (the ctx's time left)", left, ms, low, left.Milliseconds())
	}
	if d := r.GetDeadlineMs(); d == -1 || d > int64(ms) {
		t.Errorf("TarsGo's servant had %d ms left (-1: no deadline), want a deadline of at most iTimeout %d", d, ms)
	}
}

// ---------------------------------------------------------------------------------------------
// 7. Server errors not covered elsewhere.

// TestFeatureTarsGoErrorFuture guards that a *tars.Error from a TarsGo servant (iRet = its Code,
// sResultDesc = its Message: tars/tarsprotocol.go:136-142) reaches a future's caller as a
// *ServerError with that code and text, naming the TarsGo endpoint.
func TestFeatureTarsGoErrorFuture(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	ctx := testCtx(t)
	_, err := prx.FutureFail(ctx, &echopb.FailReq{Code: -42, Desc: "future failure"}).Get(ctx)
	se := serverError(t, "FutureFail", err)
	if se.Code != -42 || se.Desc != "future failure" {
		t.Errorf("FutureFail: code %d %q, want -42 \"future failure\"", se.Code, se.Desc)
	}
	if !strings.Contains(se.Endpoint, strconv.Itoa(s.pbPort)) {
		t.Errorf("ServerError.Endpoint %q does not name TarsGo's port %d", se.Endpoint, s.pbPort)
	}
}

// TestFeatureTarscommHandlerErrorsToTarsGo guards that a tarscomm handler's plain Go error or panic
// is answered as TarsCpp answers a servant's exception (ServantHandle.cpp:604-618 of TarsCpp:
// TARSSERVERUNKNOWNERR, -99, with its text), which TarsGo's client turns into a *tars.Error of that
// code (tars/servant.go:280-287).
func TestFeatureTarscommHandlerErrorsToTarsGo(t *testing.T) {
	const obj = "Interop.TarscommServer.ErrObj"
	s := server.New(server.WithWorkers(2), server.WithLogger(zaptest.NewLogger(t).Named("errs")))
	if err := s.Handle(obj, "Plain", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
		return nil, errors.New("plain failure")
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(obj, "Panic", func(context.Context, *server.Current, []byte, []byte) ([]byte, error) {
		panic("handler panicked")
	}); err != nil {
		t.Fatal(err)
	}
	port := serve(t, s, "127.0.0.1:0", "errs")
	proxy := obj + "@" + endpointString(port)
	for _, tc := range []struct{ fn, want string }{{"Plain", "plain failure"}, {"Panic", ""}} {
		c := runTarsGoClient(t, job.Job{Proxy: proxy, Op: job.OpRaw, Func: tc.fn}).Calls[0]
		if c.ErrType != "*tars.Error" || c.ErrCode != codec.RetUnknown || !strings.Contains(c.Err, tc.want) {
			t.Errorf("%s: TarsGo got %q (%s, code %d), want a *tars.Error -99 containing %q", tc.fn, c.Err, c.ErrType, c.ErrCode, tc.want)
		}
	}
}

// startTarsGoServerWith is launchTarsGoServer with extra, a line in its <server> section, for
// one test: t.Cleanup stops it.
func startTarsGoServerWith(t *testing.T, id, extra string) *tarsgoServer {
	t.Helper()
	s, err := launchTarsGoServer(id, extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t.Failed()) })
	return s
}

// TestFeatureTarsGoHandleTimeout guards that the answer of a TarsGo server with handletimeout
// (tars/transport/tarsserver.go:109-124; Protocol.InvokeTimeout, tars/tarsprotocol.go:199-209: iRet
// 1, "server invoke timeout") reaches the caller as that *ServerError, not as its own timeout, and
// that the same packet TarsGo writes for a one-way request (tcphandler.go:78-86) is dropped,
// counted late once, and leaves the connection serving the next calls.
func TestFeatureTarsGoHandleTimeout(t *testing.T) {
	s := startTarsGoServerWith(t, "handletimeout", "handletimeout=200")
	comm := newComm1(t)
	prx := echoProxy(t, comm, s)
	ctx := testCtx(t)
	if _, err := prx.Echo(ctx, &echopb.EchoReq{}); err != nil {
		t.Fatal(err)
	}
	// The *ServerError, not ErrTimeout, tells TarsGo's answer from the caller's own timeout;
	// the only bound on time is that TarsGo does not answer before its handletimeout.
	start := time.Now()
	_, err := prx.Sleep(ctx, &echopb.SleepReq{Ms: 1000, IgnoreDeadline: true}, servantproxy.WithTimeout(3*time.Second))
	elapsed := time.Since(start)
	se := serverError(t, "Sleep past handletimeout", err)
	if se.Code != 1 || se.Desc != "server invoke timeout" {
		t.Errorf("Sleep past handletimeout: code %d %q, want 1 \"server invoke timeout\"", se.Code, se.Desc)
	}
	if elapsed < 200*time.Millisecond-clockSlop {
		t.Errorf("answered after %v, before handletimeout (200ms)", elapsed)
	}

	before := comm.Stats()
	if err := prx.OnewaySleep(ctx, &echopb.SleepReq{Ms: 600, IgnoreDeadline: true}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "TarsGo's answer to the one-way request is read and counted late", func() bool {
		return endpointStats(comm.Stats(), tarsgoPbObj).Late > endpointStats(before, tarsgoPbObj).Late
	})
	for i := range int64(20) {
		r, err := prx.Echo(ctx, &echopb.EchoReq{Seq: i})
		if err != nil || r.GetSeq() != i {
			t.Fatalf("Echo %d after the one-way answer: %v, %v", i, r, err)
		}
	}
	after := comm.Stats()
	eb, ea := endpointStats(before, tarsgoPbObj), endpointStats(after, tarsgoPbObj)
	if d := ea.Late - eb.Late; d != 1 {
		t.Errorf("endpoint Late went up by %d, want 1 (TarsGo's answer to the one-way request)", d)
	}
	if ea.ConnLosses != eb.ConnLosses || ea.Pending != 0 {
		t.Errorf("connection losses %d→%d, pending %d", eb.ConnLosses, ea.ConnLosses, ea.Pending)
	}
}

// TestFeatureResponseMapsReset guards that WithResponseContext/Status set the caller's variables to
// the reply's maps, so a reply without maps (TarsGo's Echo; a *tars.Error answer, built without
// them: tars/tarsprotocol.go:136-142) leaves them empty, not holding an earlier call's.
func TestFeatureResponseMapsReset(t *testing.T) {
	prx := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	ctx := testCtx(t)
	var rc, rs map[string]string
	opts := []servantproxy.CallOption{servantproxy.WithResponseContext(&rc), servantproxy.WithResponseStatus(&rs)}
	if _, err := prx.Inspect(ctx, &echopb.InspectReq{}, append(opts, servantproxy.WithContext(map[string]string{"k": "v"}),
		servantproxy.WithStatus(map[string]string{"s": "t"}))...); err != nil {
		t.Fatal(err)
	}
	if rc["rsp-k"] != "v" || rs["rsp-s"] != "t" {
		t.Fatalf("reply maps %v %v", rc, rs)
	}
	if _, err := prx.Echo(ctx, &echopb.EchoReq{}, opts...); err != nil {
		t.Fatal(err)
	}
	if len(rc) != 0 || len(rs) != 0 {
		t.Errorf("after a reply without maps: context %v status %v, want empty", rc, rs)
	}
	rc, rs = map[string]string{"stale": "1"}, map[string]string{"stale": "1"}
	_, err := prx.Fail(ctx, &echopb.FailReq{Code: 3, Desc: "x"}, opts...)
	serverError(t, "Fail", err)
	if len(rc) != 0 || len(rs) != 0 {
		t.Errorf("after an error reply without maps: context %v status %v, want empty", rc, rs)
	}
}

// TestFeatureTarsGoQueueTimeoutReplyIsLate guards that a call queued behind a busy TarsGo server
// (maxroutine=1) ends with ErrTimeout at its deadline, and that TarsGo's later
// TARSSERVERQUEUETIMEOUT answer (-6, tars/tarsprotocol.go:52-60, 95-98) is a late reply: dropped,
// counted once, and given to no other call.
func TestFeatureTarsGoQueueTimeoutReplyIsLate(t *testing.T) {
	s := startTarsGoServerWith(t, "maxroutine", "maxroutine=1\n      queuecap=100")
	comm := newComm1(t, keepEndpointsActive)
	prx := echoProxy(t, comm, s)
	ctx := testCtx(t)
	if _, err := prx.Echo(ctx, &echopb.EchoReq{}); err != nil {
		t.Fatal(err)
	}
	before := comm.Stats()
	eb := endpointStats(before, tarsgoPbObj)
	// The Sleep holds TarsGo's only handler goroutine well past the Echo's timeout.
	slow := make(chan error, 1)
	if err := prx.AsyncSleep(ctx, &echopb.SleepReq{Ms: 1500, IgnoreDeadline: true}, func(r *echopb.SleepRsp, err error) { slow <- err },
		servantproxy.WithTimeout(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Once the Sleep is queued on the connection, the Echo goes after it on the wire, and
	// TarsGo queues it behind the Sleep (one connection, one reader, one FIFO job queue).
	eventually(t, "the Sleep is queued on the connection", func() bool {
		return endpointStats(comm.Stats(), tarsgoPbObj).Sent > eb.Sent
	})
	const echoTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := prx.Echo(ctx, &echopb.EchoReq{Seq: 5}, servantproxy.WithTimeout(echoTimeout))
	if elapsed := time.Since(start); !errors.Is(err, servantproxy.ErrTimeout) || elapsed < echoTimeout-clockSlop {
		t.Errorf("queued Echo with a %v timeout: %v after %v, want ErrTimeout, not before the timeout", echoTimeout, err, elapsed)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the slow call: %v", err)
	}
	for i := range int64(5) {
		if r, err := prx.Echo(ctx, &echopb.EchoReq{Seq: 100 + i}); err != nil || r.GetSeq() != 100+i {
			t.Fatalf("Echo after the queue timeout: %v, %v", r, err)
		}
	}
	// The one call that timed out has its reply counted late once, and nothing else: no other
	// call timed out, none is left pending, and the connection stayed.
	eventually(t, "TarsGo's -6 answer is read and counted late", func() bool {
		return endpointStats(comm.Stats(), tarsgoPbObj).Late > eb.Late
	})
	after := comm.Stats()
	ea := endpointStats(after, tarsgoPbObj)
	if dl, dt, dr := ea.Late-eb.Late, ea.Timeouts-eb.Timeouts, lateReplies(after)-lateReplies(before); dl != 1 || dt != 1 || dr != 1 {
		t.Errorf("endpoint Late went up by %d, Timeouts by %d, net thread LateReplies by %d; want 1 each", dl, dt, dr)
	}
	if ea.Pending != 0 || ea.ConnLosses != eb.ConnLosses {
		t.Errorf("%d calls pending, connection losses %d→%d", ea.Pending, eb.ConnLosses, ea.ConnLosses)
	}
	eventually(t, "TarsGo logs the queue timeout", func() bool {
		return strings.Contains(s.out.String(), "handle queue timeout") && strings.Contains(s.out.String(), "func:Echo")
	})
}
