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

	retries int

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
//
// retries is how many other endpoints a call may try after failing before any of it was
// written (a refused connection, a failed write); 0 turns retries off, as in TARS.
func New(target endpoint.Target, balancer string, retries int, loop adapterproxy.Loop, opts adapterproxy.Options) (*ObjectProxy, error) {
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
	o := &ObjectProxy{name: target.Object, loop: loop, lb: lb, hash: hash, retries: retries}
	for _, ep := range target.Endpoints {
		o.adapters = append(o.adapters, adapterproxy.New(ep, target.Object, loop, opts))
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
	i := o.pick(c)
	if i < 0 {
		c.Complete(call.ErrNoEndpoint)
		return
	}
	o.send(c, i)
}

// Retry implements call.Router: c failed with err before any byte of it was written. It goes to
// an endpoint it has not tried yet if retries remain and its deadline has not passed; otherwise
// it fails with err. Must be called on the loop goroutine.
func (o *ObjectProxy) Retry(c *call.Call, err error) {
	if int(c.Tries) > o.retries || len(o.adapters) < 2 || (c.Deadline != 0 && c.Deadline <= o.loop.Now()) {
		c.Complete(err)
		return
	}
	i := o.pickUntried(c)
	if i < 0 {
		c.Complete(err)
		return
	}
	o.send(c, i)
}

func (o *ObjectProxy) send(c *call.Call, i int) {
	c.Tries++
	if i < 64 {
		c.Tried |= 1 << i
	}
	o.adapters[i].Send(c)
}

// pick returns the index of the endpoint for c, or -1 if there is none.
func (o *ObjectProxy) pick(c *call.Call) int {
	switch len(o.adapters) {
	case 0:
		return -1
	case 1:
		return 0
	}
	o.refresh()
	if c.Hashed {
		return o.hash.Pick(o.nodes, c.Hash)
	}
	return o.lb.Pick(o.nodes, 0)
}

// pickUntried picks among the endpoints c has not tried, preferring active ones; -1 if c has
// tried them all.
func (o *ObjectProxy) pickUntried(c *call.Call) int {
	o.refresh()
	untried := 0
	for i := range o.nodes {
		if i < 64 && c.Tried&(1<<i) != 0 {
			o.nodes[i].Active = false
		} else {
			untried++
		}
	}
	if untried == 0 {
		return -1
	}
	i := o.lb.Pick(o.nodes, c.Hash)
	if i >= 0 && i < 64 && c.Tried&(1<<i) != 0 {
		// Every untried endpoint is inactive and the balancer fell back to a tried one: take
		// the first untried endpoint instead.
		for j := range o.nodes {
			if j >= 64 || c.Tried&(1<<j) == 0 {
				return j
			}
		}
	}
	return i
}

// refresh copies each endpoint's availability into the balancer's view.
func (o *ObjectProxy) refresh() {
	now := o.loop.Now()
	for i, a := range o.adapters {
		o.nodes[i].Active = a.Active(now)
	}
}

// Tick runs the periodic chores of every endpoint's connection (keepalive, idle close). Must be
// called on the loop goroutine.
func (o *ObjectProxy) Tick(now int64) {
	for _, a := range o.adapters {
		a.Tick(now)
	}
}

// FailAll ends every call of every endpoint with err. Must be called on the loop goroutine.
func (o *ObjectProxy) FailAll(err error) {
	for _, a := range o.adapters {
		a.FailAll(err)
	}
}
