package objectproxy

import (
	"fmt"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// ObjectProxy routes the calls of one servant on one net thread.
type ObjectProxy struct {
	// Immutable after New.
	name string
	loop adapterproxy.Loop

	// Owned by the loop goroutine.
	adapters []*adapterproxy.AdapterProxy
	nodes    []endpoint.Node // nodes[i] describes adapters[i]
	lb       endpoint.Balancer
	hash     endpoint.Balancer
}

// New returns the ObjectProxy of target's servant on loop, with one AdapterProxy per endpoint.
// balancer names the load-balancing algorithm for calls without a hash code ("" is
// round-robin); hashed calls use consistent hashing when balancer is "consistenthash", and
// hashing modulo the endpoint count otherwise. Safe to call off the loop; the ObjectProxy belongs
// to the loop afterwards.
func New(target endpoint.Target, balancer string, loop adapterproxy.Loop, opts adapterproxy.Options) (*ObjectProxy, error) {
	lb, err := endpoint.NewBalancer(balancer)
	if err != nil {
		return nil, fmt.Errorf("objectproxy %s: %w", target.Object, err)
	}
	hashName := "hash"
	if balancer == "consistenthash" {
		hashName = "consistenthash"
	}
	hash, err := endpoint.NewBalancer(hashName)
	if err != nil {
		return nil, fmt.Errorf("objectproxy %s: %w", target.Object, err)
	}
	o := &ObjectProxy{name: target.Object, loop: loop, lb: lb, hash: hash}
	for _, ep := range target.Endpoints {
		o.adapters = append(o.adapters, adapterproxy.New(ep, loop, opts))
		o.nodes = append(o.nodes, endpoint.Node{Endpoint: ep, Active: true})
	}
	return o, nil
}

// Name returns the servant name. Safe for concurrent use.
func (o *ObjectProxy) Name() string { return o.name }

// Adapters returns the AdapterProxies, one per endpoint in proxy-string order. Must be called on
// the loop goroutine.
func (o *ObjectProxy) Adapters() []*adapterproxy.AdapterProxy { return o.adapters }

// Route picks the AdapterProxy for c and hands c to it; a servant without endpoints fails c with
// call.ErrNoEndpoint. Must be called on the loop goroutine.
func (o *ObjectProxy) Route(c *call.Call) {
	a := o.pick(c)
	if a == nil {
		c.Complete(call.ErrNoEndpoint)
		return
	}
	a.Send(c)
}

func (o *ObjectProxy) pick(c *call.Call) *adapterproxy.AdapterProxy {
	switch len(o.adapters) {
	case 0:
		return nil
	case 1:
		return o.adapters[0]
	}
	now := o.loop.Now()
	for i, a := range o.adapters {
		o.nodes[i].Active = a.Active(now)
	}
	var i int
	if c.Hashed {
		i = o.hash.Pick(o.nodes, c.Hash)
	} else {
		i = o.lb.Pick(o.nodes, 0)
	}
	if i < 0 {
		return nil
	}
	return o.adapters[i]
}

// FailAll ends every call of every endpoint with err. Must be called on the loop goroutine.
func (o *ObjectProxy) FailAll(err error) {
	for _, a := range o.adapters {
		a.FailAll(err)
	}
}
