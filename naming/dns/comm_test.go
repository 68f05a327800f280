package dns_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const servant = "Test.Greeter.GreeterObj"

// startGreeter starts a project server on addr answering SayHello with "<name>@<id>"; it
// returns the address it listens on.
func startGreeter(t *testing.T, id, addr string) (string, error) {
	t.Helper()
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1))
	err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start(addr)
	if err != nil {
		return "", err
	}
	t.Cleanup(func() {
		within(t, "server Stop", func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.Stop(ctx)
		})
	})
	return a.String(), nil
}

// within runs f, failing the test with the goroutines if it takes over 10s.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s did not return within 10s; goroutines:\n%s", what, buf[:runtimeStack(buf)])
	}
}

// twoGreeters starts greeters "a" on 127.0.0.1 and "b" on 127.0.0.2 on the same port (a dns://
// name has one port for all its addresses), trying a few ports.
func twoGreeters(t *testing.T) int {
	t.Helper()
	for range 20 {
		addr, err := startGreeter(t, "a", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(addr)
		if _, err := startGreeter(t, "b", "127.0.0.2:"+p); err == nil {
			port, _ := strconv.Atoi(p)
			return port
		}
	}
	t.Skip("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}

func sayHello(sp *servantproxy.ServantProxy, seq uint64) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	rsp := new(hellopb.HelloReply)
	if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "n", Seq: seq}, rsp); err != nil {
		return "", err
	}
	if rsp.GetSeq() != seq || !strings.HasPrefix(rsp.GetMessage(), "n@") {
		return "", fmt.Errorf("reply %v does not answer %d", rsp, seq)
	}
	return strings.TrimPrefix(rsp.GetMessage(), "n@"), nil
}

// allReach makes 20 calls in a row and fails unless every one is answered by id.
func allReach(t *testing.T, sp *servantproxy.ServantProxy, id string) {
	t.Helper()
	for seq := range uint64(20) {
		from, err := sayHello(sp, seq)
		if err != nil || from != id {
			t.Fatalf("call %d: from %q, %v; want every call answered by %s", seq, from, err, id)
		}
	}
}

// movesTo calls until calls are answered by id on every net thread (8 in a row: the threads
// take calls in turn, and each applies the new list on its own loop, so the first answer by id
// says only that one thread has it), within a liveness bound of seconds; no call may fail.
func movesTo(t *testing.T, sp *servantproxy.ServantProxy, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	inRow := 0
	for seq := uint64(0); time.Now().Before(deadline); seq++ {
		from, err := sayHello(sp, seq)
		if err != nil {
			t.Fatalf("call failed while the answer changed: %v", err)
		}
		if from != id {
			inRow = 0
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if inRow++; inRow == 8 {
			return
		}
	}
	t.Fatalf("calls did not all reach %s within 10s", id)
}

// TestCommunicatorFollowsDNS: a Communicator whose naming key is a dns:// name resolved by a
// responder the test runs: the calls reach the server of the answer, then the server of the
// changed answer; through NXDOMAIN and with the resolver down they keep reaching it (the last
// list stays) and the failures are logged.
func TestCommunicatorFollowsDNS(t *testing.T) {
	port := twoGreeters(t)
	rs := startResponder(t)
	rs.setA("greeter.test", "127.0.0.1")
	cfg := conf.Default()
	cfg.NetThread = 2
	cfg.Naming.Source = fmt.Sprintf("dns://greeter.test:%d?resolver=%s&interval=100ms&timeout=1s", port, rs.addr())
	core, logs := observer.New(zap.WarnLevel)
	comm, err := communicator.New(cfg, communicator.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	defer within(t, "Communicator.Close", func() { _ = comm.Close() })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	allReach(t, sp, "a")

	rs.setA("greeter.test", "127.0.0.2")
	changed := time.Now()
	movesTo(t, sp, "b")
	t.Logf("a call reached b %v after the answer changed (interval 100ms)", time.Since(changed).Round(time.Millisecond))
	allReach(t, sp, "b")

	warned := func(what string) bool {
		for _, e := range logs.FilterMessageSnippet("dns naming: resolution failed").All() {
			if strings.Contains(e.ContextMap()["error"].(string), what) {
				return true
			}
		}
		return false
	}
	waitLogged := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !warned(what); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no warning saying %q within 10s; logs: %v", what, logs.All())
			}
		}
	}
	rs.setA("greeter.test")
	waitLogged("no such host")
	allReach(t, sp, "b")

	rs.stop()
	waitLogged("connection refused")
	allReach(t, sp, "b")
}

// TestCommunicatorDNSNoFirstList: a name that does not resolve leaves its servant without a
// list: a call ends at its deadline with ErrNaming, which wraps the DNS error.
func TestCommunicatorDNSNoFirstList(t *testing.T) {
	rs := startResponder(t)
	cfg := conf.Default()
	// A short timeout: a lookup in flight when the test ends (Go's resolver finishes it on a
	// goroutine of its own) meets the stopped responder and must end before goleak looks.
	cfg.Naming.Source = "dns://nowhere.test:9000?interval=100ms&timeout=300ms&resolver=" + rs.addr()
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer within(t, "Communicator.Close", func() { _ = comm.Close() })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	// The first call starts the watch: make sure a resolution failed before the call checked.
	for deadline := time.Now().Add(10 * time.Second); rs.asked("nowhere.test") == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the name was not asked within 10s")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_ = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply))
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{}, new(hellopb.HelloReply))
	var de *net.DNSError
	if !errors.Is(err, naming.ErrNaming) || !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("call without a list: %v; want ErrNaming wrapping NXDOMAIN", err)
	}
	t.Logf("the call said: %v", err)
}

func runtimeStack(buf []byte) int { return runtime.Stack(buf, true) }
