package future_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/future"
	"github.com/tarscomm/tarscomm/server"
)

// greeter starts a Greeter server (hellopb, generated from examples/hello/hellopb/hello.proto) on
// a free port of 127.0.0.1 that refuses the name "nobody", and a Communicator with a proxy for
// it. stop stops both.
func greeter() (prx *hellopb.GreeterProxy, stop func()) {
	srv := server.New(server.WithNumEventLoop(1))
	err := server.HandleProto(srv, "Hello.Server.GreeterObj", "SayHello",
		func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			if req.GetName() == "nobody" {
				return nil, &server.Error{Code: 1, Desc: "who are you?"}
			}
			return &hellopb.HelloReply{Message: "hello " + req.GetName()}, nil
		})
	if err != nil {
		panic(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	comm, err := communicator.New(conf.Default())
	if err != nil {
		panic(err)
	}
	prx = new(hellopb.GreeterProxy)
	proxy := fmt.Sprintf("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port)
	if err := comm.StringToProxy(proxy, prx); err != nil {
		panic(err)
	}
	return prx, func() {
		comm.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	}
}

// Two calls in flight at once; Join waits for both (or for ctx), then each result is read.
func ExampleJoin() {
	prx, stop := greeter()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	f1 := prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "a"})
	f2 := prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "b"})
	if err := future.Join(ctx, f1, f2); err != nil { // ctx's error, or the first call's that failed
		fmt.Println(err)
	}
	r1, err1 := f1.Get(ctx) // completed: returns at once
	r2, err2 := f2.Get(ctx)
	fmt.Println(r1.GetMessage(), err1)
	fmt.Println(r2.GetMessage(), err2)
	// Output:
	// hello a <nil>
	// hello b <nil>
}

// WhenAll is Join without blocking: a Future that completes when every one of its futures has,
// with the number that failed and the first error. Its OnDone callback runs on the async worker
// that completes the last call.
func ExampleWhenAll() {
	prx, stop := greeter()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	f1 := prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "a"})
	f2 := prx.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "nobody"})
	done := make(chan struct{})
	future.WhenAll(f1, f2).OnDone(func(failed int, err error) {
		var se *communicator.ServerError
		if errors.As(err, &se) {
			fmt.Println("failed:", failed, "- the server answered", se.Code, se.Desc)
		}
		close(done)
	})
	<-done // by the calls' deadlines at the latest
	r1, err1 := f1.Get(ctx)
	fmt.Println(r1.GetMessage(), err1)
	// Output:
	// failed: 1 - the server answered 1 who are you?
	// hello a <nil>
}
