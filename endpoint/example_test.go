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
