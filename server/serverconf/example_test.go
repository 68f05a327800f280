package serverconf_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

// Servers built from a [server] table, called by a client.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := conf.Parse([]byte(`
[server]
netthread = 1
[[server.adapter]]
servant = "App.Server.EchoObj"
endpoint = "tcp -h 127.0.0.1 -p 0"   # a free port
threads = 2                          # handlers on 2 goroutines
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	srvs, err := serverconf.New(cfg.Server)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Generated stubs register with Register<Service>(srvs.Server(servant), servant, impl).
	_ = srvs.Server("App.Server.EchoObj").Handle("App.Server.EchoObj", "echo",
		func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			return append(rsp, req...), nil
		})
	if err := srvs.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer srvs.Stop(ctx)

	ep, _ := srvs.Endpoint("App.Server.EchoObj") // the port bound
	comm, err := communicator.New(conf.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	sp, _ := comm.Proxy("App.Server.EchoObj@" + ep.String())
	rsp, err := sp.InvokeRaw(ctx, "echo", []byte("hello"))
	fmt.Println(string(rsp), err)
	// Output: hello <nil>
}
