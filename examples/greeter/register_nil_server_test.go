package greeter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/greeter/hello"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

// TestRegisterOnUnknownServantIsError: serving from a configuration, Register<Svc>(
// srvs.Server(name), name, impl) with a name no adapter serves (a letter off the file's) gets a
// nil *server.Server from srvs.Server, as documented; the generated Register of either generator
// returns an error naming the servant.
//
// Before, server.(*Server).Handle dereferenced the nil server: the process crashed.
func TestRegisterOnUnknownServantIsError(t *testing.T) {
	cfg, err := conf.Parse([]byte(`
[server]
netthread = 1

[[server.adapter]]
servant = "Hello.GreeterServer.GreeterObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
`))
	if err != nil {
		t.Fatal(err)
	}
	srvs, err := serverconf.New(cfg.Server)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srvs.Stop(context.Background()) }()
	const typo = "Hello.GreeterServer.GreeterOb"
	for name, register := range map[string]func() error{
		"tars2tarscomm": func() error {
			return hello.RegisterGreeter(srvs.Server(typo), typo, hello.UnimplementedGreeterServer{})
		},
		"protoc-gen-go-tars": func() error {
			return hellopb.RegisterGreeter(srvs.Server(typo), typo, hellopb.UnimplementedGreeterServer{})
		},
	} {
		panicked, err := func() (panicked any, err error) {
			defer func() { panicked = recover() }()
			return nil, register()
		}()
		if panicked != nil || err == nil || !strings.Contains(err.Error(), typo) {
			t.Errorf("%s: Register on srvs.Server(%q) (nil): panicked %v, err %v; want an error naming the servant", name, typo, panicked, err)
		}
	}
}
