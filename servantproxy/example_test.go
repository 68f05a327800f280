package servantproxy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestMain fails the package if a test or an example leaves a goroutine behind. The two ignored
// functions are the process-wide goroutines that gnet's dependency ants starts in its package init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// The untyped proxy under the generated ones: Invoke names the function and takes the protobuf
// messages; WithTimeout bounds this call alone.
func ExampleServantProxy_Invoke() {
	srv := server.New(server.WithNumEventLoop(1))
	err := server.HandleProto(srv, "Hello.Server.GreeterObj", "SayHello",
		func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			return &hellopb.HelloReply{Message: "hello " + req.GetName()}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	}()
	comm, err := communicator.New(conf.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()

	var sp servantproxy.ServantProxy
	proxy := fmt.Sprintf("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port)
	if err := comm.StringToProxy(proxy, &sp); err != nil {
		fmt.Println(err)
		return
	}
	rsp := new(hellopb.HelloReply)
	err = sp.Invoke(context.Background(), "SayHello", &hellopb.HelloRequest{Name: "tars"}, rsp,
		servantproxy.WithTimeout(time.Second))
	fmt.Println(rsp.GetMessage(), err)

	var se *servantproxy.ServerError
	err = sp.Invoke(context.Background(), "NoSuchFunction", &hellopb.HelloRequest{}, rsp)
	fmt.Println(errors.As(err, &se), se.Code) // the server's answer: no such function
	// Output:
	// hello tars <nil>
	// true -3
}
