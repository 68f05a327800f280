package greeter_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/greeter/hello"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/server"
)

const pbObj = "Hello.GreeterServer.PbGreeterObj"

// TestUndecodableReplyAcrossStubs: a server answers ret 0 with a body that is not
// the function's reply (one byte 0xff) to the stubs of both generators. servantproxy.ErrDecode's
// doc says "A *CallError wraps it with the decoder's error", and README's Errors section lists
// ErrDecode among the causes a *CallError names servant, function and endpoint for. The
// protoc-gen-go-tars stub (hellopb) does so, and its interceptors' End is told the failure. The
// tars2tarscomm stub (hello) must end the same way in each call style (sync, async, future):
// errors.Is ErrDecode, errors.As *CallError with Servant, Func and Endpoint, the message naming
// the servant and the endpoint, and the interceptors' End told the call failed.
// Before, the tars2tarscomm stub decoded after InvokeRaw returned: a bare fmt error naming
// neither servant nor endpoint, and the interceptors' End told nil.
func TestUndecodableReplyAcrossStubs(t *testing.T) {
	srv := server.New(server.WithNumEventLoop(1))
	garbage := func(context.Context, *server.Current, []byte, []byte) ([]byte, error) { return []byte{0xff}, nil }
	if err := srv.Handle(obj, "greet", garbage); err != nil {
		t.Fatal(err)
	}
	if err := srv.Handle(pbObj, "SayHello", garbage); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())

	var (
		mu    sync.Mutex
		ended = map[string][]error{} // function -> the errors End was told
	)
	icpt := func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(ci *interceptor.CallInfo) {
			mu.Lock()
			ended[ci.Function] = append(ended[ci.Function], ci.Err)
			mu.Unlock()
		})
		return next(ctx, info)
	}
	comm, err := communicator.New(conf.Default(), communicator.WithInterceptor(icpt))
	if err != nil {
		t.Fatal(err)
	}
	defer comm.Close()
	host, port, _ := strings.Cut(addr.String(), ":")
	at := "@tcp -h " + host + " -p " + port + " -t 10000"
	tprx, pprx := new(hello.GreeterProxy), new(hellopb.GreeterProxy)
	if err := comm.StringToProxy(obj+at, tprx); err != nil {
		t.Fatal(err)
	}
	if err := comm.StringToProxy(pbObj+at, pprx); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	wait := func(ch chan error) error {
		select {
		case err := <-ch:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("callback did not run within 10s")
		}
	}
	errs := map[string]error{}
	req := hello.NewGreetReq()
	_, _, errs["tars2tarscomm sync"] = tprx.Greet(ctx, req)
	ch := make(chan error, 1)
	if err := tprx.AsyncGreet(ctx, req, func(_ int32, _ hello.GreetRsp, err error) { ch <- err }); err != nil {
		t.Fatal(err)
	}
	errs["tars2tarscomm async"] = wait(ch)
	_, errs["tars2tarscomm future"] = tprx.FutureGreet(ctx, req).Get(ctx)

	preq := &hellopb.HelloRequest{Name: "x"}
	_, errs["protoc-gen-go-tars sync"] = pprx.SayHello(ctx, preq)
	if err := pprx.AsyncSayHello(ctx, preq, func(_ *hellopb.HelloReply, err error) { ch <- err }); err != nil {
		t.Fatal(err)
	}
	errs["protoc-gen-go-tars async"] = wait(ch)
	_, errs["protoc-gen-go-tars future"] = pprx.FutureSayHello(ctx, preq).Get(ctx)

	for _, style := range []string{"sync", "async", "future"} {
		for _, gen := range []string{"protoc-gen-go-tars", "tars2tarscomm"} {
			name := gen + " " + style
			err := errs[name]
			servant, fn := pbObj, "SayHello"
			if gen == "tars2tarscomm" {
				servant, fn = obj, "greet"
			}
			var ce *communicator.CallError
			switch {
			case !errors.Is(err, communicator.ErrDecode):
				t.Errorf("%s: %v, want ErrDecode", name, err)
			case !errors.As(err, &ce):
				t.Errorf("%s: %q (%T) is no *CallError; want one naming servant %s, function %s and endpoint %s",
					name, err, err, servant, fn, addr)
			case ce.Servant != servant || ce.Func != fn || ce.Endpoint != addr.String():
				t.Errorf("%s: CallError{Servant %q, Func %q, Endpoint %q}, want %q, %q, %q", name, ce.Servant, ce.Func, ce.Endpoint, servant, fn, addr)
			}
			if err != nil && (!strings.Contains(err.Error(), servant) || !strings.Contains(err.Error(), addr.String())) {
				t.Errorf("%s: message %q names neither the servant %s nor the endpoint %s", name, err, servant, addr)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for fn, errs := range ended {
		for i, err := range errs {
			if !errors.Is(err, communicator.ErrDecode) {
				t.Errorf("interceptor End of %s call %d (sync, async, future): info.Err %v, but the caller got ErrDecode", fn, i, err)
			}
		}
	}
}
