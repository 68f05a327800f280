package etcd_test

import (
	"context"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/etcd"
)

// A server registers its endpoint under a lease; a client follows the object's endpoints
// through a Source given to the Communicator in code.
func Example() {
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	// Server side: the key /tars/App.Server.EchoObj/10.0.0.1:9000, renewed until Deregister.
	ep, err := endpoint.ParseEndpoint("tcp -h 10.0.0.1 -p 9000 -t 60000")
	if err != nil {
		log.Fatal(err)
	}
	reg, err := etcd.Register(ctx, cli, "/tars", "App.Server.EchoObj", ep, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Deregister(context.Background())

	// Client side.
	comm, err := communicator.New(conf.Default(), communicator.WithNaming(etcd.New(cli, "/tars")))
	if err != nil {
		log.Fatal(err)
	}
	defer comm.Close()
	sp, err := comm.Proxy("App.Server.EchoObj") // no '@': resolved through etcd
	if err != nil {
		log.Fatal(err)
	}
	_ = sp // sp.Invoke(ctx, "Echo", req, rsp)
}

// Importing this package registers the etcd scheme: the naming key of the configuration file
// selects it, and the Communicator makes (and closes) the etcd client itself.
func Example_naming() {
	cfg, err := conf.Parse([]byte(`naming = "etcd://127.0.0.1:2379,127.0.0.2:2379/tars"`))
	if err != nil {
		log.Fatal(err)
	}
	comm, err := communicator.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer comm.Close()
	sp, err := comm.Proxy("App.Server.EchoObj")
	if err != nil {
		log.Fatal(err)
	}
	_ = sp
}
