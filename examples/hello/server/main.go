// Command hello-server serves the example Greeter (Hello.Server.GreeterObj) with tarscomm's TARS
// server, on the endpoints of its TOML configuration, until it is interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server"
)

func main() {
	config := flag.String("config", "examples/hello/server.toml", "TOML configuration file")
	flag.Parse()
	if err := run(*config); err != nil {
		log.Fatalf("hello-server: %v", err)
	}
}

func run(path string) error {
	cfg, err := conf.Load(path)
	if err != nil {
		return err
	}
	if len(cfg.Server.Adapters) == 0 {
		return fmt.Errorf("%s: no [[server.adapter]]", path)
	}
	var servers []*server.Server
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range servers {
			_ = s.Stop(ctx)
		}
	}()
	for _, a := range cfg.Server.Adapters {
		ep, err := endpoint.ParseEndpoint(a.Endpoint)
		if err != nil {
			return err
		}
		s := server.New(server.WithNumEventLoop(cfg.Server.NetThread), server.WithMaxPacketSize(cfg.Server.MaxPacketSize))
		if err := server.HandleProto(s, a.Servant, "SayHello", sayHello); err != nil {
			return err
		}
		addr, err := s.Start(ep.Addr())
		if err != nil {
			return err
		}
		servers = append(servers, s)
		fmt.Printf("hello-server: %s listening on %s\n", a.Servant, addr)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	fmt.Println("hello-server: stopping")
	return nil
}

func sayHello(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
	return &hellopb.HelloReply{Message: "hello " + req.GetName(), Seq: req.GetSeq()}, nil
}
