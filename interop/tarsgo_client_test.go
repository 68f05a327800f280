package interop_test

// TarsGo client → tarscomm server.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
)

// mustOK fails the test for every call of res that did not succeed.
func mustOK(t *testing.T, res *job.Result) {
	t.Helper()
	for i, c := range res.Calls {
		if c.Err != "" || !c.OK {
			t.Errorf("call %d (%d bytes): ok=%v err=%q (%s)", i, c.Size, c.OK, c.Err, c.ErrType)
		}
	}
}

func TestTarsGoClientSync(t *testing.T) {
	s := startTarscommServer(t, "a")
	res := runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpEcho, Sizes: sizes})
	if len(res.Calls) != len(sizes) {
		t.Fatalf("%d calls reported, want %d", len(res.Calls), len(sizes))
	}
	mustOK(t, res)
}

// TestTarsGoClientConcurrent has TarsGo make calls from many goroutines at once (TarsGo's
// clients have no async call; concurrent calls share its connection), so that tarscomm's server
// answers interleaved requests, out of order from its workers.
func TestTarsGoClientConcurrent(t *testing.T) {
	s := startTarscommServer(t, "a")
	small := make([]int, 25)
	for i := range small {
		small[i] = i * 37
	}
	res := runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpEcho, Sizes: small, Parallel: 16})
	if len(res.Calls) != 16*len(small) {
		t.Fatalf("%d calls reported, want %d", len(res.Calls), 16*len(small))
	}
	mustOK(t, res)
}

func TestTarsGoClientOneway(t *testing.T) {
	s := startTarscommServer(t, "a")
	const n = 30
	res := runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpNote, Tag: "oneway", Count: n, Oneway: true})
	for i, c := range res.Calls {
		if c.Err != "" {
			t.Errorf("one-way call %d: %s", i, c.Err)
		}
	}
	eventually(t, "the one-way notes reach the tarscomm server", func() bool { return len(s.echo.recorded("oneway")) >= n })
	got := s.echo.recorded("oneway")
	slices.Sort(got)
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(got, want) {
		t.Errorf("server recorded %v, want 1..%d once each", got, n)
	}
	s.echo.mu.Lock()
	oneways := s.echo.oneways
	s.echo.mu.Unlock()
	if oneways != n {
		t.Errorf("%d of the notes arrived as one-way packets, want %d", oneways, n)
	}
}

func TestTarsGoClientContextStatus(t *testing.T) {
	s := startTarscommServer(t, "a")
	reqCtx := map[string]string{"k": "v", "long": strings.Repeat("y", 300)}
	reqStatus := map[string]string{"s": "t"}
	res := runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpInspect, Context: reqCtx, Status: reqStatus, TimeoutMs: 1500})
	c := res.Calls[0]
	if c.Err != "" {
		t.Fatalf("Inspect: %s", c.Err)
	}
	var rsp echopb.InspectRsp
	if err := proto.Unmarshal(c.Body, &rsp); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(rsp.GetContext(), reqCtx) || !maps.Equal(rsp.GetStatus(), reqStatus) {
		t.Errorf("tarscomm saw context %v and status %v, want %v and %v", rsp.GetContext(), rsp.GetStatus(), reqCtx, reqStatus)
	}
	if want := map[string]string{"rsp-k": "v", "rsp-long": reqCtx["long"]}; !maps.Equal(c.RspContext, want) {
		t.Errorf("TarsGo got reply context %v, want %v", c.RspContext, want)
	}
	if want := map[string]string{"rsp-s": "t"}; !maps.Equal(c.RspStatus, want) {
		t.Errorf("TarsGo got reply status %v, want %v", c.RspStatus, want)
	}
	if ms := rsp.GetDeadlineMs(); ms <= 0 || ms > 1500 {
		t.Errorf("tarscomm's servant context had %d ms left, want 1..1500 (TarsGo's iTimeout)", ms)
	}
	if rsp.GetTimeoutMs() != 1500 || rsp.GetVersion() != 1 || rsp.GetPacketType() != 0 ||
		rsp.GetServant() != tarscommPbObj || rsp.GetFunc() != "Inspect" {
		t.Errorf("tarscomm saw iTimeout %d, version %d, packet type %d, %s.%s; want 1500, 1, 0, %s.Inspect",
			rsp.GetTimeoutMs(), rsp.GetVersion(), rsp.GetPacketType(), rsp.GetServant(), rsp.GetFunc(), tarscommPbObj)
	}
}

// TestTarsGoClientTimeout: a call to a slow tarscomm servant ends on TarsGo's side at its
// timeout; a servant that honours iTimeout (Current.Timeout) stops at it. (The iTimeout value
// itself is checked in TestTarsGoClientContextStatus.)
func TestTarsGoClientTimeout(t *testing.T) {
	s := startTarscommServer(t, "a")
	// The servant bounds its sleep by the iTimeout TarsGo sent. Its reply arrives about when
	// TarsGo's timeout fires, so TarsGo reports either.
	res := runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpSleep, Ms: 5000, TimeoutMs: 300})
	if c := res.Calls[0]; c.ElapsedMs > 1000 {
		t.Errorf("Sleep(5s) with a 300ms TarsGo timeout took %d ms (err %q)", c.ElapsedMs, c.Err)
	}
	eventually(t, "the servant ends its sleep", func() bool { return len(s.echo.recorded("sleep")) == 1 })
	if ms := s.echo.recorded("sleep")[0]; ms > 1000 {
		t.Errorf("the servant slept %d ms: iTimeout 300 did not reach it", ms)
	}

	// A servant that ignores the deadline: TarsGo gives up at its timeout.
	res = runTarsGoClient(t, job.Job{Proxy: s.pbProxy(), Op: job.OpSleep, Ms: 1500, Ignore: true, TimeoutMs: 300})
	c := res.Calls[0]
	if !strings.Contains(c.Err, "request timeout") {
		t.Errorf("Sleep(1.5s) with a 300ms TarsGo timeout: err %q, want TarsGo's \"request timeout\"", c.Err)
	}
	if c.ElapsedMs < 290 || c.ElapsedMs > 1000 {
		t.Errorf("TarsGo gave up after %d ms, want about 300", c.ElapsedMs)
	}
}

func TestTarsGoClientPing(t *testing.T) {
	s := startTarscommServer(t, "a")
	for _, proxy := range []string{s.pbProxy(), s.tarsProxy()} {
		res := runTarsGoClient(t, job.Job{Proxy: proxy, Op: job.OpRaw, Func: codec.FuncPing})
		if c := res.Calls[0]; c.Err != "" || c.Ret != 0 || len(c.Body) != 0 {
			t.Errorf("tars_ping to %s: err %q, ret %d, %d body bytes; want a success", proxy, c.Err, c.Ret, len(c.Body))
		}
	}
}

// TestTarsGoClientErrors checks how TarsGo's client reports tarscomm's error answers.
func TestTarsGoClientErrors(t *testing.T) {
	s := startTarscommServer(t, "a")
	for _, tc := range []struct {
		name     string
		job      job.Job
		wantType string // the Go type of TarsGo's error
		wantCode int32  // tars.GetErrorCode
		wantErr  string // a substring of its text
	}{
		{
			name:     "unknown function",
			job:      job.Job{Proxy: s.pbProxy(), Op: job.OpRaw, Func: "NoSuchFunc"},
			wantType: "*tars.Error", wantCode: codec.RetNoFunc, wantErr: "no such function: " + tarscommPbObj + ".NoSuchFunc",
		},
		{
			name:     "unknown servant",
			job:      job.Job{Proxy: "No.Such.ServantObj@" + endpointString(s.port), Op: job.OpRaw, Func: "Echo"},
			wantType: "*tars.Error", wantCode: codec.RetNoServant, wantErr: "no such servant: No.Such.ServantObj",
		},
		{
			name:     "undecodable body",
			job:      job.Job{Proxy: s.pbProxy(), Op: job.OpRaw, Func: "Echo", Body: []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}},
			wantType: "*tars.Error", wantCode: codec.RetServerDecode, wantErr: "proto",
		},
		{
			name:     "undecodable .tars body",
			job:      job.Job{Proxy: s.tarsProxy(), Op: job.OpRaw, Func: "echo", Body: []byte{0x1d, 0x00}},
			wantType: "*tars.Error", wantCode: codec.RetServerDecode, wantErr: "codec",
		},
		{
			name:     "servant error",
			job:      job.Job{Proxy: s.pbProxy(), Op: job.OpFail, Code: 1234, Desc: "failed on purpose"},
			wantType: "*tars.Error", wantCode: 1234, wantErr: "failed on purpose",
		},
		{
			// TarsGo quirk: a reply with iRet 1 comes out of TarsInvoke as a plain error
			// holding the description, not as a *tars.Error (GetErrorCode still says 1).
			name:     "iRet 1",
			job:      job.Job{Proxy: s.pbProxy(), Op: job.OpFail, Code: 1, Desc: "one"},
			wantType: "*errors.errorString", wantCode: 1, wantErr: "one",
		},
		{
			// TarsGo quirk: a non-zero iRet without a description comes out of TarsInvoke as a
			// plain error "basef error code N": TarsGo's callers lose the code
			// (GetErrorCode says 1). tarscomm's server always describes its own errors.
			name:     "no description",
			job:      job.Job{Proxy: s.pbProxy(), Op: job.OpFail, Code: 5},
			wantType: "*errors.errorString", wantCode: 1, wantErr: "basef error code 5",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runTarsGoClient(t, tc.job).Calls[0]
			if c.ErrType != tc.wantType || c.ErrCode != tc.wantCode || !strings.Contains(c.Err, tc.wantErr) {
				t.Errorf("TarsGo got error %q (%s, code %d), want %s with code %d containing %q",
					c.Err, c.ErrType, c.ErrCode, tc.wantType, tc.wantCode, tc.wantErr)
			}
		})
	}
}

// TestTarsGoClientTarsIDL: TarsGo encodes .tars parameters with its codec, tarscomm's server
// decodes them with package codec, and TarsGo decodes the reply.
func TestTarsGoClientTarsIDL(t *testing.T) {
	s := startTarscommServer(t, "a")
	res := runTarsGoClient(t, job.Job{Proxy: s.tarsProxy(), Op: job.OpTarsEcho, Sizes: sizes})
	if len(res.Calls) != len(sizes) {
		t.Fatalf("%d calls reported, want %d", len(res.Calls), len(sizes))
	}
	mustOK(t, res)
	c := runTarsGoClient(t, job.Job{Proxy: s.tarsProxy(), Op: job.OpTarsSum, Nums: []int32{1, -2, 1 << 30, 1 << 30, 7}, Label: "label"}).Calls[0]
	if !c.OK || c.TarsRet != 5 || c.Total != 2<<30+6 || c.Label != "label" {
		t.Errorf("sum: ok=%v ret %d total %d label %q err %q; want 5, %d, \"label\"", c.OK, c.TarsRet, c.Total, c.Label, c.Err, int64(2<<30+6))
	}
}

// TestTarsGoClientEndpoints gives TarsGo two tarscomm servers in one proxy string.
//
// TarsGo quirk: its selectors key endpoints by host alone (Endpoint.HashKey), so two
// endpoints on the same host and different ports count as one: every call goes to the same
// server. The test asserts that behaviour, so that a TarsGo upgrade that fixes it is noticed.
func TestTarsGoClientEndpoints(t *testing.T) {
	a, b := startTarscommServer(t, "a"), startTarscommServer(t, "b")
	proxy := fmt.Sprintf("%s@%s:%s", tarscommPbObj, endpointString(a.port), endpointString(b.port))
	res := runTarsGoClient(t, job.Job{Proxy: proxy, Op: job.OpInspect, Count: 20})
	count := map[string]int{}
	for i, c := range res.Calls {
		if c.Err != "" {
			t.Fatalf("call %d: %s", i, c.Err)
		}
		var rsp echopb.InspectRsp
		if err := proto.Unmarshal(c.Body, &rsp); err != nil {
			t.Fatal(err)
		}
		count[rsp.GetServerId()]++
	}
	if len(count) != 1 || (count["a"] != 20 && count["b"] != 20) {
		t.Errorf("calls per server %v; TarsGo used to send all 20 to one of two endpoints on 127.0.0.1", count)
	}
}
