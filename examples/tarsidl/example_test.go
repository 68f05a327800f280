package tarsidl_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
)

const obj = "Hello.EchoServer.EchoObj"

// serveEcho serves "int echo(vector<byte> req, out vector<byte> rsp)" on tarscomm's server.
func serveEcho() (*server.Server, string, error) {
	s := server.New(server.WithNumEventLoop(1))
	err := s.Handle(obj, "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		in, err := codec.NewDecoder(req).ReadBytesView(1, true) // in vector<byte> req
		if err != nil {
			return nil, &server.Error{Code: codec.RetServerDecode, Desc: err.Error()}
		}
		e := codec.Encoder{Buf: rsp}
		e.WriteInt32(0, 0)  // the return value
		e.WriteBytes(2, in) // out vector<byte> rsp
		return e.Buf, nil
	})
	if err != nil {
		return nil, "", err
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	_, port, _ := net.SplitHostPort(addr.String())
	return s, "tcp -h 127.0.0.1 -p " + port, nil
}

// Example calls echo: the parameters are encoded with codec.Encoder at tags 1..N, sent with
// InvokeRaw, and the reply decoded with codec.Decoder: the return value at tag 0, the
// out-parameter rsp at tag 2. The bodies are those of the protocol's .tars test vector (captured from TarsGo v1.4.6).
func Example() {
	srv, endpoint, err := serveEcho()
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
	sp, err := comm.Proxy(obj + "@" + endpoint)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()

	var e codec.Encoder
	e.WriteBytes(1, []byte("hello")) // in vector<byte> req
	body, err := sp.InvokeRaw(ctx, "echo", e.Buf)
	if err != nil {
		fmt.Println(err) // a *servantproxy.ServerError for a non-zero iRet
		return
	}
	d := codec.NewDecoder(body)
	ret, err := d.ReadInt32(0, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	rsp, err := d.ReadBytes(2, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("request body: % x\n", e.Buf)
	fmt.Printf("reply body:   % x\n", body)
	fmt.Printf("echo returned %d, rsp %q\n", ret, rsp)
	// Output:
	// request body: 1d 00 00 05 68 65 6c 6c 6f
	// reply body:   0c 2d 00 00 05 68 65 6c 6c 6f
	// echo returned 0, rsp "hello"
}
