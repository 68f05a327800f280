package netthread_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/server"
)

// Example hands one hand-encoded call to a net thread, which routes it to its servant's
// ObjectProxy, connects, gives it a request id, writes it and matches the reply. The
// Communicator does all of this for a ServantProxy; this is the layer below it.
func Example() {
	// An echo server on loopback to call.
	s := server.New()
	if err := s.Handle("Test.EchoServer.EchoObj", "Echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	}); err != nil {
		panic(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	}()

	t, err := netthread.New(netthread.Options{Index: 0})
	if err != nil {
		panic(err)
	}
	defer t.Close()
	obj := "Test.EchoServer.EchoObj@tcp -h 127.0.0.1 -p " + strconv.Itoa(addr.(*net.TCPAddr).Port)
	target, err := endpoint.Parse(obj)
	if err != nil {
		panic(err)
	}
	o, err := t.NewObjectProxy(target, objectproxy.Options{Balancer: "roundrobin"})
	if err != nil {
		panic(err)
	}

	// A call: its destination, its deadline, and its frame, encoded with the placeholder id that
	// the connection's AdapterProxy replaces with the real one.
	c := call.Get()
	defer call.Put(c)
	c.Dest, c.Servant, c.Func = o, target.Object, "Echo"
	c.Start = call.Now()
	c.Deadline = c.Start + int64(5*time.Second)
	c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
		Version:     codec.VersionTars,
		RequestID:   codec.RequestIDUnassigned,
		ServantName: target.Object,
		FuncName:    "Echo",
		Buffer:      []byte("hello"),
		Timeout:     5000,
	})
	if err := t.Submit(c); err != nil {
		panic(err)
	}
	<-c.Done()
	fmt.Printf("err %v ret %d body %s\n", c.Err, c.Ret, c.Body)
	// Output: err <nil> ret 0 body hello
}
