package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/interop/internal/tarsidl"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// Object names of the servants. TarsGo's are <app>.<server>.<name> of its configuration.
const (
	tarsgoPbObj     = "Interop.TarsGoServer.EchoPbObj"
	tarsgoTarsObj   = "Interop.TarsGoServer.EchoTarsObj"
	tarscommPbObj   = "Interop.TarscommServer.EchoPbObj"
	tarscommTarsObj = "Interop.TarscommServer.EchoTarsObj"
)

// lockedBuffer collects a subprocess's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tarsgoServer is a running cmd/tarsgo-server process.
type tarsgoServer struct {
	id               string
	pbPort, tarsPort int
	cmd              *exec.Cmd
	out              *lockedBuffer
	exited           chan struct{}
}

// pbEndpoint and tarsEndpoint are the TARS endpoints of the two servants.
func (s *tarsgoServer) pbEndpoint() string   { return endpointString(s.pbPort) }
func (s *tarsgoServer) tarsEndpoint() string { return endpointString(s.tarsPort) }

func endpointString(port int) string { return fmt.Sprintf("tcp -h 127.0.0.1 -p %d -t 60000", port) }

// stop kills the process and waits for it; with dump it prints what the server logged.
func (s *tarsgoServer) stop(dump bool) {
	_ = s.cmd.Process.Kill()
	<-s.exited
	if dump {
		fmt.Fprintf(os.Stderr, "--- TarsGo server %s output:\n%s", s.id, s.out.String())
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

const tarsgoConfig = `<tars>
  <application>
    <server>
      app=Interop
      server=TarsGoServer
      logLevel=ERROR
      <Interop.TarsGoServer.EchoPbObjAdapter>
        endpoint=tcp -h 127.0.0.1 -p %d -t 60000
        servant=Interop.TarsGoServer.EchoPbObj
      </Interop.TarsGoServer.EchoPbObjAdapter>
      <Interop.TarsGoServer.EchoTarsObjAdapter>
        endpoint=tcp -h 127.0.0.1 -p %d -t 60000
        servant=Interop.TarsGoServer.EchoTarsObj
      </Interop.TarsGoServer.EchoTarsObjAdapter>
    </server>
  </application>
</tars>
`

// launchTarsGoServer starts a TarsGo server on two fresh loopback ports and waits until both
// accept connections. It retries with other ports if the process dies (a port taken meanwhile).
// Each of extra is a line added to the <server> section of its configuration
// ("handletimeout=200").
func launchTarsGoServer(id string, extra ...string) (*tarsgoServer, error) {
	var lastErr error
	for range 3 {
		s, err := tryLaunch(id, extra)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryLaunch(id string, extra []string) (*tarsgoServer, error) {
	pb, err := freePort()
	if err != nil {
		return nil, err
	}
	tp, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tarsgo-server-"+id+"-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "server.conf")
	cfg := tarsgoConfig
	for _, line := range extra {
		cfg = strings.Replace(cfg, "logLevel=ERROR", "logLevel=ERROR\n      "+line, 1)
	}
	if err := os.WriteFile(path, fmt.Appendf(nil, cfg, pb, tp), 0o644); err != nil {
		return nil, err
	}
	s := &tarsgoServer{id: id, pbPort: pb, tarsPort: tp, out: new(lockedBuffer), exited: make(chan struct{})}
	s.cmd = exec.Command(bins.server, "-config", path, "-id", id)
	s.cmd.Dir = dir // TarsGo looks for its cache file (<datapath>/<server>.tarsdat) there
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = s.cmd.Wait()
		_ = os.RemoveAll(dir)
		close(s.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for _, port := range []int{pb, tp} {
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
			if err == nil {
				_ = c.Close()
				break
			}
			select {
			case <-s.exited:
				return nil, fmt.Errorf("TarsGo server %s exited: %s", id, s.out.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				s.stop(false)
				return nil, fmt.Errorf("TarsGo server %s does not listen on %d: %s", id, port, s.out.String())
			}
		}
	}
	return s, nil
}

// The TarsGo server most tests share, started on first use and stopped by TestMain.
var shared struct {
	once sync.Once
	srv  *tarsgoServer
	err  error
}

func sharedTarsGoServer(t *testing.T) *tarsgoServer {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = launchTarsGoServer("shared") })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

func stopShared(dump bool) {
	if shared.srv != nil {
		shared.srv.stop(dump)
	}
}

// startTarsGoServer starts a TarsGo server for one test; t.Cleanup stops it.
func startTarsGoServer(t *testing.T, id string) *tarsgoServer {
	t.Helper()
	s, err := launchTarsGoServer(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t.Failed()) })
	return s
}

// newComm starts a tarscomm Communicator with two net threads; t.Cleanup closes it.
func newComm(t *testing.T) *communicator.Communicator {
	t.Helper()
	cfg := conf.Default()
	cfg.NetThread = 2
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", c.Close) })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// runTarsGoClient runs one job in a cmd/tarsgo-client process and returns its result.
func runTarsGoClient(t *testing.T, j job.Job) *job.Result {
	t.Helper()
	in, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.client)
	cmd.Dir = t.TempDir()
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tarsgo-client %s: %v\n%s", j.Op, err, stderr.String())
	}
	var res job.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("tarsgo-client %s: bad result %q: %v\n%s", j.Op, stdout.String(), err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("tarsgo-client %s stderr:\n%s", j.Op, stderr.String())
		}
	})
	return &res
}

// tarscommServer is tarscomm's server serving echopb.Echo (generated RegisterEcho) and the
// .tars interface EchoTars (tarsidl.Register), for TarsGo clients.
type tarscommServer struct {
	id   string
	srv  *server.Server
	port int
	echo *echoServer
}

func (s *tarscommServer) pbProxy() string   { return tarscommPbObj + "@" + endpointString(s.port) }
func (s *tarscommServer) tarsProxy() string { return tarscommTarsObj + "@" + endpointString(s.port) }

// startTarscommServer starts a tarscomm server with workers (Sleep blocks) on a loopback
// port; t.Cleanup stops it.
func startTarscommServer(t *testing.T, id string) *tarscommServer {
	t.Helper()
	s := server.New(server.WithWorkers(8), server.WithNumEventLoop(2),
		server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)))
	e := &echoServer{id: id, notes: make(map[string][]int64)}
	if err := echopb.RegisterEcho(s, tarscommPbObj, e); err != nil {
		t.Fatal(err)
	}
	if err := tarsidl.Register(s, tarscommTarsObj); err != nil {
		t.Fatal(err)
	}
	port := serve(t, s, "127.0.0.1:0", "tarscomm server "+id)
	return &tarscommServer{id: id, srv: s, port: port, echo: e}
}

// serve starts s on addr ("127.0.0.1:0", "udp://127.0.0.1:0") and returns its port; t.Cleanup
// stops it within 10 s.
func serve(t *testing.T, s *server.Server, addr, name string) int {
	t.Helper()
	a, err := s.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop %s: %v", name, err)
		}
	})
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.Port
	case *net.UDPAddr:
		return a.Port
	}
	t.Fatalf("%s listens on %v, not TCP or UDP", name, a)
	return 0
}

// echoServer implements the generated echopb.EchoServer, with the semantics of TarsGo's
// tarsgoecho.EchoPbImp.
type echoServer struct {
	id string

	mu      sync.Mutex
	notes   map[string][]int64
	oneways int // Note calls received as one-way
}

var _ echopb.EchoServer = (*echoServer)(nil)

func (e *echoServer) Echo(_ context.Context, _ *server.Current, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
	return &echopb.EchoRsp{Data: req.GetData(), Seq: req.GetSeq()}, nil
}

func (e *echoServer) Inspect(ctx context.Context, cur *server.Current, _ *echopb.InspectReq) (*echopb.InspectRsp, error) {
	cur.ResponseContext = prefixed(cur.Context)
	cur.ResponseStatus = prefixed(cur.Status)
	rsp := &echopb.InspectRsp{
		Context:     maps.Clone(cur.Context),
		Status:      maps.Clone(cur.Status),
		TimeoutMs:   cur.Timeout,
		PacketType:  int32(cur.PacketType),
		MessageType: cur.MessageType,
		Version:     int32(cur.Version),
		DeadlineMs:  -1,
		Servant:     cur.Servant,
		Func:        cur.Func,
		ServerId:    e.id,
	}
	if d, ok := ctx.Deadline(); ok { // the client's iTimeout, as TarsGo's servants get it
		rsp.DeadlineMs = time.Until(d).Milliseconds()
	}
	return rsp, nil
}

func prefixed(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out["rsp-"+k] = v
	}
	return out
}

// Sleep waits ms, but no longer than the client's timeout (cur.Timeout, unless
// ignore_deadline), as a server that honours iTimeout does; it records how long it slept
// under "sleep".
func (e *echoServer) Sleep(ctx context.Context, cur *server.Current, req *echopb.SleepReq) (*echopb.SleepRsp, error) {
	d := time.Duration(req.GetMs()) * time.Millisecond
	rsp := new(echopb.SleepRsp)
	if limit := time.Duration(cur.Timeout) * time.Millisecond; cur.Timeout > 0 && limit < d && !req.GetIgnoreDeadline() {
		d, rsp.Interrupted = limit, true
	}
	start := time.Now()
	timer := time.NewTimer(d)
	defer timer.Stop()
	done := ctx.Done() // ends at the client's deadline too (server: "The handler's ctx")
	if req.GetIgnoreDeadline() {
		done = nil // only the timer ends the sleep
	}
	select {
	case <-timer.C:
	case <-done:
		rsp.Interrupted = true
	}
	rsp.SleptMs = time.Since(start).Milliseconds()
	e.record("sleep", rsp.SleptMs)
	return rsp, nil
}

func (e *echoServer) Fail(_ context.Context, _ *server.Current, req *echopb.FailReq) (*echopb.FailRsp, error) {
	return nil, &server.Error{Code: req.GetCode(), Desc: req.GetDesc()}
}

func (e *echoServer) Note(_ context.Context, cur *server.Current, req *echopb.NoteReq) (*echopb.NoteRsp, error) {
	e.mu.Lock()
	if cur.PacketType == 1 {
		e.oneways++
	}
	e.mu.Unlock()
	e.record(req.GetTag(), req.GetSeq())
	return new(echopb.NoteRsp), nil
}

func (e *echoServer) Notes(_ context.Context, _ *server.Current, req *echopb.NotesReq) (*echopb.NotesRsp, error) {
	return &echopb.NotesRsp{Seqs: e.recorded(req.GetTag())}, nil
}

func (e *echoServer) record(tag string, seq int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notes[tag] = append(e.notes[tag], seq)
}

func (e *echoServer) recorded(tag string) []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int64(nil), e.notes[tag]...)
}

// checkSum calls sum(nums, label) on sp and checks the reply: len(nums), their total (a long
// out parameter) and label.
func checkSum(t *testing.T, ctx context.Context, sp *servantproxy.ServantProxy, nums []int32, label string) {
	t.Helper()
	var want int64
	for _, n := range nums {
		want += int64(n)
	}
	body, err := sp.InvokeRaw(ctx, tarsidl.FuncSum, tarsidl.EncodeSum(nums, label))
	if err != nil {
		t.Fatalf("sum: %v", err)
	}
	ret, total, echoed, err := tarsidl.DecodeSumReply(body)
	if err != nil || int(ret) != len(nums) || total != want || echoed != label {
		t.Errorf("sum: ret %d, total %d, label %q, err %v; want %d, %d, %q", ret, total, echoed, err, len(nums), want, label)
	}
}

// eventually polls cond every 10ms until it holds or 5s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

// sizes are the payload sizes of the echo tests: empty, tiny, around the 1-byte/4-byte string
// length boundary, larger than a socket buffer, up to 4 MiB.
var sizes = []int{0, 1, 255, 256, 4096, 65536, 1 << 20, 4 << 20}
