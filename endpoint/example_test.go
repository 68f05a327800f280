package endpoint_test

import (
	"fmt"

	"github.com/tarscomm/tarscomm/endpoint"
)

func ExampleParse() {
	t, err := endpoint.Parse("Hello.Server.GreeterObj@tcp -h 10.0.0.1 -p 18015 -t 60000:tcp -p 18015 -h ::1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Object)
	for _, e := range t.Endpoints {
		fmt.Println(e.Proto, e.Addr(), e.Timeout)
	}
	fmt.Println(t)

	_, err = endpoint.Parse("Hello.Server.GreeterObj@tcp -h 1.2.3.4 -p 70000")
	fmt.Println(err)
	// Output:
	// Hello.Server.GreeterObj
	// tcp 10.0.0.1:18015 1m0s
	// tcp [::1]:18015 0s
	// Hello.Server.GreeterObj@tcp -h 10.0.0.1 -p 18015 -t 60000:tcp -h ::1 -p 18015
	// endpoint: bad port "70000" in "tcp -h 1.2.3.4 -p 70000"
}

func ExampleNewBalancer() {
	t, _ := endpoint.Parse("A.B.C@tcp -h 10.0.0.1 -p 1 -w 1:tcp -h 10.0.0.2 -p 1 -w 2:tcp -h 10.0.0.3 -p 1")
	nodes := make([]endpoint.Node, len(t.Endpoints))
	for i, e := range t.Endpoints {
		nodes[i] = endpoint.Node{Endpoint: e, Active: i != 2}
	}
	b, err := endpoint.NewBalancer("weighted")
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 6 {
		fmt.Print(nodes[b.Pick(nodes, 0)].Endpoint.Host, " ")
	}
	fmt.Println()
	// Output:
	// 10.0.0.2 10.0.0.1 10.0.0.2 10.0.0.2 10.0.0.1 10.0.0.2
}
