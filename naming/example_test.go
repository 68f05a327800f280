package naming_test

import (
	"fmt"
	"strings"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// A naming source of its own, chosen by name: "list://host:port,host:port" lists fixed
// endpoints. A real source registers in its package's init function, and the Communicator's
// naming key ("list://10.0.0.1:9000,10.0.0.2:9000") then selects it.
func ExampleRegister() {
	naming.Register("list", func(t naming.Target, _ naming.Env) (naming.Source, error) {
		var l naming.List
		for hp := range strings.SplitSeq(t.Rest, ",") {
			ep, err := endpoint.ParseEndpoint("tcp -h " + strings.Replace(hp, ":", " -p ", 1))
			if err != nil {
				return nil, err
			}
			l.Active = append(l.Active, ep)
		}
		return naming.Static(l), nil
	})

	src, err := naming.Build("list://10.0.0.1:9000,10.0.0.2:9000", naming.Env{})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop := src.Watch(naming.Query{Object: "App.Server.Obj"}, func(l naming.List) {
		for _, ep := range l.Active {
			fmt.Println(ep)
		}
	})
	stop()

	_, err = naming.Build("consul://127.0.0.1:8500", naming.Env{})
	fmt.Println(err != nil)
	// Output:
	// tcp -h 10.0.0.1 -p 9000
	// tcp -h 10.0.0.2 -p 9000
	// true
}
