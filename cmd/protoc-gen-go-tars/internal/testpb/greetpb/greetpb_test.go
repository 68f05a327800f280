package greetpb_test

// These tests compile the generator's golden output and run it end to end: the generated
// proxies call the generated registrations on the project's server over loopback TCP.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/internal/testpb/commonpb"
	"github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/internal/testpb/greetpb"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestMain fails the package if a test leaves a goroutine behind (ants, gnet's dependency,
// starts two process-wide goroutines in its init).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

const (
	greeterObj = "Test.GreetServer.GreeterObj"
	adminObj   = "Test.GreetServer.AdminObj"
)

// greeter implements GreeterServer; Old is left to UnimplementedGreeterServer.
type greeter struct {
	greetpb.UnimplementedGreeterServer
	calls  atomic.Int64
	oneway chan string    // names of one-way SayHello calls
	funcs  chan string    // cur.Func of get_stamp calls
	ctxs   chan [2]string // context and status values seen by SayHello
}

func (g *greeter) SayHello(_ context.Context, cur *server.Current, req *greetpb.HelloRequest) (*greetpb.HelloReply, error) {
	g.calls.Add(1)
	if cur.PacketType == codec.PacketOneway {
		g.oneway <- req.GetName()
		return &greetpb.HelloReply{}, nil
	}
	if v, ok := cur.Context["k"]; ok {
		g.ctxs <- [2]string{v, cur.Status["s"]}
		cur.ResponseContext = map[string]string{"rk": "r" + v}
	}
	msg := "hello " + req.GetName()
	for range req.GetTimes() - 1 {
		msg += " " + req.GetName()
	}
	return &greetpb.HelloReply{Message: msg}, nil
}

func (g *greeter) Count(context.Context, *server.Current, *commonpb.Empty) (*commonpb.Stamp, error) {
	return &commonpb.Stamp{Seq: g.calls.Load(), Note: "count"}, nil
}

func (g *greeter) GetStamp(_ context.Context, cur *server.Current, req *commonpb.Stamp) (*commonpb.Stamp, error) {
	g.funcs <- cur.Func
	return &commonpb.Stamp{Seq: req.GetSeq() + 1, Note: req.GetNote()}, nil
}

type admin struct{}

func (admin) Reset(context.Context, *server.Current, *commonpb.Empty) (*commonpb.Empty, error) {
	return nil, &server.Error{Code: 42, Desc: "reset refused"}
}

// start serves g and admin on a loopback port and returns bound proxies.
func start(t testing.TB, g *greeter, log *zap.Logger) (*greetpb.GreeterProxy, *greetpb.AdminProxy) {
	t.Helper()
	return startWith(t, g, admin{}, log)
}

// startWith is start with the Admin servant a.
func startWith(t testing.TB, g *greeter, a greetpb.AdminServer, log *zap.Logger) (*greetpb.GreeterProxy, *greetpb.AdminProxy) {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1), server.WithLogger(log))
	if err := greetpb.RegisterGreeter(s, greeterObj, g); err != nil {
		t.Fatal(err)
	}
	if err := greetpb.RegisterAdmin(s, adminObj, a); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	comm, err := communicator.New(conf.Default(), communicator.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		t.Fatal(err)
	}
	ep := "@tcp -h 127.0.0.1 -p " + port
	gp := new(greetpb.GreeterProxy)
	if err := comm.StringToProxy(greeterObj+ep, gp); err != nil {
		t.Fatal(err)
	}
	sp, err := comm.Proxy(adminObj + ep)
	if err != nil {
		t.Fatal(err)
	}
	return gp, greetpb.NewAdminProxy(sp)
}

func newGreeter() *greeter {
	return &greeter{oneway: make(chan string, 16), funcs: make(chan string, 16), ctxs: make(chan [2]string, 16)}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSync(t *testing.T) {
	g := newGreeter()
	gp, _ := start(t, g, zaptest.NewLogger(t))
	ctx := testCtx(t)
	if gp.ServantProxy() == nil || gp.ServantProxy().Name() != greeterObj {
		t.Fatalf("StringToProxy did not bind the generated proxy to %s", greeterObj)
	}

	times := int32(2)
	rsp, err := gp.SayHello(ctx, &greetpb.HelloRequest{Name: "tars", Times: &times})
	if err != nil || rsp.GetMessage() != "hello tars tars" {
		t.Fatalf("SayHello = %v, %v; want \"hello tars tars\"", rsp, err)
	}

	// Call options reach the wire: context and status maps, and the reply's context comes back.
	var rspCtx map[string]string
	_, err = gp.SayHello(ctx, &greetpb.HelloRequest{Name: "meta"},
		servantproxy.WithContext(map[string]string{"k": "v"}), servantproxy.WithStatus(map[string]string{"s": "t"}),
		servantproxy.WithResponseContext(&rspCtx))
	if err != nil {
		t.Fatal(err)
	}
	if got := <-g.ctxs; got != [2]string{"v", "t"} {
		t.Errorf("server saw context/status %q, want [v t]", got)
	}
	if rspCtx["rk"] != "rv" {
		t.Errorf("reply context %v, want rk=rv", rspCtx)
	}

	// A message type of another Go package, and a method whose TARS name is snake case.
	st, err := gp.GetStamp(ctx, &commonpb.Stamp{Seq: 41, Note: "n"})
	if err != nil || st.GetSeq() != 42 || st.GetNote() != "n" {
		t.Fatalf("GetStamp = %v, %v; want {42 n}", st, err)
	}
	if fn := <-g.funcs; fn != "get_stamp" {
		t.Errorf("GetStamp arrived as function %q, want get_stamp", fn)
	}
	cnt, err := gp.Count(ctx, &commonpb.Empty{})
	if err != nil || cnt.GetSeq() != 2 {
		t.Errorf("Count = %v, %v; want seq 2", cnt, err)
	}
}

func TestErrors(t *testing.T) {
	gp, ap := start(t, newGreeter(), zaptest.NewLogger(t))
	ctx := testCtx(t)

	// Old is not implemented: UnimplementedGreeterServer answers RetNoFunc.
	_, err := gp.Old(ctx, &greetpb.HelloRequest{})
	var se *servantproxy.ServerError
	if !errors.As(err, &se) || se.Code != codec.RetNoFunc || se.Desc != "method Old not implemented" {
		t.Errorf("Old: %v, want a ServerError %d \"method Old not implemented\"", err, codec.RetNoFunc)
	}
	// A handler's *server.Error reaches the caller with its code and description.
	_, err = ap.Reset(ctx, &commonpb.Empty{})
	if !errors.As(err, &se) || se.Code != 42 || se.Desc != "reset refused" {
		t.Errorf("Reset: %v, want a ServerError 42 \"reset refused\"", err)
	}
	// The same through the async path.
	done := make(chan error, 1)
	if err := ap.AsyncReset(ctx, &commonpb.Empty{}, func(rsp *commonpb.Empty, err error) {
		if rsp != nil {
			err = fmt.Errorf("reply %v with error %w", rsp, err)
		}
		done <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.As(err, &se) || se.Code != 42 {
		t.Errorf("AsyncReset: %v, want a ServerError 42 and a nil reply", err)
	}
	if err := gp.AsyncSayHello(ctx, &greetpb.HelloRequest{}, nil); err == nil {
		t.Error("AsyncSayHello with a nil callback: no error")
	}
	if err := greetpb.RegisterGreeter(server.New(), greeterObj, nil); err == nil {
		t.Error("RegisterGreeter with a nil implementation: no error")
	}
	// A deadline already passed: the sync call fails at once with ErrTimeout.
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := gp.SayHello(expired, &greetpb.HelloRequest{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SayHello past its deadline: %v, want context.DeadlineExceeded", err)
	}
}

func TestAsync(t *testing.T) {
	gp, _ := start(t, newGreeter(), zaptest.NewLogger(t))
	ctx := testCtx(t)
	const n = 500
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range n {
		name := fmt.Sprint(i)
		wg.Add(1)
		err := gp.AsyncSayHello(ctx, &greetpb.HelloRequest{Name: name}, func(rsp *greetpb.HelloReply, err error) {
			defer wg.Done()
			if err != nil || rsp.GetMessage() != "hello "+name {
				t.Errorf("AsyncSayHello(%s) = %v, %v", name, rsp, err)
				failed.Add(1)
			}
		})
		if err != nil {
			wg.Done()
			t.Fatal(err)
		}
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d async calls failed", failed.Load(), n)
	}
}

func TestOneway(t *testing.T) {
	g := newGreeter()
	gp, _ := start(t, g, zaptest.NewLogger(t))
	ctx := testCtx(t)
	if err := gp.OnewaySayHello(ctx, &greetpb.HelloRequest{Name: "fire"}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-g.oneway:
		if name != "fire" {
			t.Errorf("server got one-way %q, want fire", name)
		}
	case <-ctx.Done():
		t.Fatal("the one-way call never reached the server")
	}
}

// BenchmarkAsync compares the allocations of the generated async call with AsyncInvoke and a
// closure written by hand: the generated code pools its carrier, so per call it allocates only
// the reply, where the closure costs one more allocation.
func BenchmarkAsync(b *testing.B) {
	gp, _ := start(b, newGreeter(), zap.NewNop())
	ctx := context.Background()
	req := &greetpb.HelloRequest{Name: "bench"}
	// The user's callback is made once: what is measured is what each call adds.
	run := func(b *testing.B, call func(cb func(*greetpb.HelloReply, error)) error) {
		var wg sync.WaitGroup
		window := make(chan struct{}, 256)
		cb := func(_ *greetpb.HelloReply, err error) {
			if err != nil {
				b.Error(err)
			}
			<-window
			wg.Done()
		}
		b.ReportAllocs()
		for b.Loop() {
			window <- struct{}{}
			wg.Add(1)
			if err := call(cb); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
	}
	b.Run("generated", func(b *testing.B) {
		run(b, func(cb func(*greetpb.HelloReply, error)) error {
			return gp.AsyncSayHello(ctx, req, cb)
		})
	})
	b.Run("closure", func(b *testing.B) {
		sp := gp.ServantProxy()
		run(b, func(cb func(*greetpb.HelloReply, error)) error {
			rsp := new(greetpb.HelloReply)
			return sp.AsyncInvoke(ctx, "SayHello", req, rsp, func(err error) {
				if err != nil {
					cb(nil, err)
					return
				}
				cb(rsp, nil)
			})
		})
	})
}

// TestAsyncResponseContext: an async callback and a future's waiter read the reply's context
// through WithResponseContext, each call its own.
func TestAsyncResponseContext(t *testing.T) {
	g := newGreeter()
	gp, _ := start(t, g, zaptest.NewLogger(t))
	ctx := testCtx(t)
	const n = 8
	var wg sync.WaitGroup
	rspCtx := make([]map[string]string, n)
	for i := range n {
		wg.Add(1)
		err := gp.AsyncSayHello(ctx, &greetpb.HelloRequest{Name: "a"}, func(_ *greetpb.HelloReply, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("async call %d: %v", i, err)
				return
			}
			if want := fmt.Sprint("ra", i); rspCtx[i]["rk"] != want {
				t.Errorf("async call %d: the callback saw reply context %v, want rk=%s", i, rspCtx[i], want)
			}
		}, servantproxy.WithContext(map[string]string{"k": fmt.Sprint("a", i)}), servantproxy.WithResponseContext(&rspCtx[i]))
		if err != nil {
			wg.Done()
			t.Fatal(err)
		}
		<-g.ctxs
	}
	wg.Wait()
	futCtx := make([]map[string]string, n)
	for i := range n {
		f := gp.FutureSayHello(ctx, &greetpb.HelloRequest{Name: "f"},
			servantproxy.WithContext(map[string]string{"k": fmt.Sprint("f", i)}), servantproxy.WithResponseContext(&futCtx[i]))
		<-g.ctxs
		if _, err := f.Get(ctx); err != nil {
			t.Fatalf("future call %d: %v", i, err)
		}
		if want := fmt.Sprint("rf", i); futCtx[i]["rk"] != want {
			t.Errorf("future call %d: reply context %v after Get, want rk=%s", i, futCtx[i], want)
		}
	}
}
