package objectproxy

import (
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// PickNow and PickOther expose the picks to the tests of objectproxy_test.
func (o *ObjectProxy) PickNow(c *call.Call) int { return o.pick(c) }

func (o *ObjectProxy) PickOther(c *call.Call, avoid int) int { return o.pickOther(c, int32(avoid)) }

// EndpointAt exposes list endpoint i to the tests of objectproxy_test.
func (o *ObjectProxy) EndpointAt(i int) endpoint.Endpoint { return o.list.at(int32(i)) }
