package greeter_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/greeter/hello"
	"github.com/tarscomm/tarscomm/server"
)

const obj = "Hello.GreeterServer.GreeterObj"

// greeter implements hello.GreeterServer. It counts its calls, so that the example can show
// the one-way call ran.
type greeter struct {
	hello.UnimplementedGreeterServer // functions added to the IDL later answer "no such function"
	calls                            *atomic.Int32
}

func (g greeter) Greet(_ context.Context, _ *server.Current, req hello.GreetReq) (int32, hello.GreetRsp, error) {
	g.calls.Add(1)
	rsp := hello.NewGreetRsp()
	rsp.Message = strings.TrimSpace(strings.Repeat("hello "+req.Name+" ", int(req.Times)))
	return int32(req.Times), rsp, nil
}

// Example serves Hello::Greeter with the generated RegisterGreeter and calls greet with the
// generated GreeterProxy: sync, async (the callback runs on an async worker), future and
// one-way. A GreetReq from NewGreetReq has the IDL's default times = 1; a literal
// hello.GreetReq{} would have Go's zero.
func Example() {
	var calls atomic.Int32
	srv := server.New(server.WithNumEventLoop(1))
	if err := hello.RegisterGreeter(srv, obj, greeter{calls: &calls}); err != nil {
		fmt.Println(err)
		return
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(context.Background())

	comm, err := communicator.New(conf.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	prx := new(hello.GreeterProxy)
	host, port, _ := strings.Cut(addr.String(), ":")
	if err := comm.StringToProxy(obj+"@tcp -h "+host+" -p "+port, prx); err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	req := hello.NewGreetReq()
	req.Name = "tars"
	ret, rsp, err := prx.Greet(ctx, req)
	fmt.Println("sync:", ret, rsp.Message, err)

	req.Times = 2
	done := make(chan string, 1)
	err = prx.AsyncGreet(ctx, req, func(ret int32, rsp hello.GreetRsp, err error) {
		done <- fmt.Sprint("async: ", ret, " ", rsp.Message, " ", err)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-done)

	req.Times = 3
	r, err := prx.FutureGreet(ctx, req).Get(ctx)
	fmt.Println("future:", r.Ret, r.Rsp.Message, err)

	req.Name = "one-way"
	fmt.Println("one-way sent:", prx.OnewayGreet(ctx, req))
	for calls.Load() < 4 && ctx.Err() == nil { // the server runs it; no reply says when
		time.Sleep(time.Millisecond)
	}
	fmt.Println("calls served:", calls.Load())
	// Output:
	// sync: 1 hello tars <nil>
	// async: 2 hello tars hello tars <nil>
	// future: 3 hello tars hello tars hello tars <nil>
	// one-way sent: <nil>
	// calls served: 4
}
