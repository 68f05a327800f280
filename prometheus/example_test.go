package tarsprom_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	tarsprom "github.com/tarscomm/tarscomm/prometheus"
	"github.com/tarscomm/tarscomm/server"
)

// A Communicator's stats as Prometheus metrics: two calls to a Greeter server, then the
// calls_total series as a scrape of /metrics would show them.
func ExampleNewCollector() {
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
	prx := new(hellopb.GreeterProxy)
	proxy := fmt.Sprintf("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port)
	if err := comm.StringToProxy(proxy, prx); err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		if _, err := prx.SayHello(context.Background(), &hellopb.HelloRequest{Name: "prom"}); err != nil {
			fmt.Println(err)
		}
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
	// http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mfs, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mf := range mfs {
		if mf.GetName() != "tarscomm_client_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if m.GetCounter().GetValue() > 0 {
				fmt.Println(mf.GetName(), labels["servant"], labels["function"], labels["result"], m.GetCounter().GetValue())
			}
		}
	}
	// Output: tarscomm_client_calls_total Hello.Server.GreeterObj SayHello ok 2
}
