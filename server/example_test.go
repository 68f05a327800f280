package server_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/server"
)

// Example starts an echo server and calls it with a hand-written TARS request.
func Example() {
	s := server.New() // inline handlers: echo never blocks
	err := s.Handle("Test.EchoServer.EchoObj", "Echo",
		func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		})
	if err != nil {
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

	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, err = c.Write(codec.AppendRequest(nil, &codec.RequestPacket{
		Version:     codec.VersionTars,
		RequestID:   1,
		ServantName: "Test.EchoServer.EchoObj",
		FuncName:    "Echo",
		Buffer:      []byte("hello"),
	}))
	if err != nil {
		panic(err)
	}
	frame, err := codec.NewFrameReader(c, 0).Next()
	if err != nil {
		panic(err)
	}
	var rsp codec.ResponsePacket
	if err := codec.DecodeResponse(frame, &rsp); err != nil {
		panic(err)
	}
	fmt.Printf("id %d ret %d body %s\n", rsp.RequestID, rsp.Ret, rsp.Buffer)
	// Output: id 1 ret 0 body hello
}
