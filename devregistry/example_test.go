package devregistry_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/server"
)

// A client finds a server through the development registry: the server's endpoint is registered
// in-process, and the client's locator is the registry.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	srv := server.New(server.WithNumEventLoop(1))
	_ = srv.Handle("App.Server.EchoObj", "echo", func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		return append(rsp, req...), nil
	})
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(ctx)

	reg, err := devregistry.Start(devregistry.Options{}) // or Options{File: "registry.toml", HTTPAddr: ...}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close(ctx)
	ep, _ := endpoint.ParseEndpoint(fmt.Sprintf("tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port))
	reg.Register("App.Server.EchoObj", ep, 0) // a server elsewhere: devregistry.Register over HTTP

	cfg := conf.Default()
	cfg.Locator = reg.Locator() // "tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p ..."
	comm, err := communicator.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	sp, _ := comm.Proxy("App.Server.EchoObj") // no '@': resolved by the registry
	rsp, err := sp.InvokeRaw(ctx, "echo", []byte("hello"))
	fmt.Println(string(rsp), err)
	// Output: hello <nil>
}
