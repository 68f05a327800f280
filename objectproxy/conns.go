package objectproxy

import (
	"math/bits"
	"slices"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Connections per endpoint (Options.Connections). The endpoint stays the unit of balancing: the
// pickers, the hash rings and the retry and backup rules see one endpoint, as in TarsCpp, and
// only then does the ObjectProxy choose one of that endpoint's connections, in turn, skipping
// the ones whose own health (each connection is an AdapterProxy with its own health rules,
// breaker and reconnect backoff) took them out. An endpoint is healthy while one of its
// connections is. With one connection per endpoint (the default) pools is nil and none of this
// runs.
//
// A call that failed on one connection before any byte of it was written (its dial failed or the
// connection closed while it waited in the send queue) moves to another live connection of the
// same endpoint (sibling) before Retry considers other endpoints: a request that never left the
// process is not lost to one broken socket while its endpoint has working ones.

// pool is the connections of one endpoint.
type pool struct {
	conns []*adapterproxy.AdapterProxy // conns[0] is also ObjectProxy.adapters[i]
	turn  uint32                       // the last connection given a call
}

// open creates the connections of endpoint e at list index i, storing them in adapters (and
// pools, when not nil); it returns the first.
func (o *ObjectProxy) open(i int, e endpoint.Endpoint, adapters []*adapterproxy.AdapterProxy, pools []pool) *adapterproxy.AdapterProxy {
	a := adapterproxy.New(e, o.name, o.loop, o.opts)
	adapters[i] = a
	if pools != nil {
		conns := make([]*adapterproxy.AdapterProxy, o.conns)
		conns[0] = a
		for k := 1; k < len(conns); k++ {
			conns[k] = adapterproxy.New(e, o.name, o.loop, o.opts)
		}
		pools[i] = pool{conns: conns}
	}
	return a
}

// ensure creates endpoint i's connections if it has none yet and returns i.
func (o *ObjectProxy) ensure(i int32) int32 {
	o.at(i)
	return i
}

// conn returns the connection of endpoint i for the next call: the next in turn that is healthy,
// or the next in turn when none is (so that a blocked connection gets its retry).
func (o *ObjectProxy) conn(i int32) *adapterproxy.AdapterProxy {
	p := &o.pools[o.ensure(i)]
	now := o.loop.Now()
	n := uint32(len(p.conns))
	for range n {
		p.turn++
		if a := p.conns[p.turn%n]; a.Active(now) {
			return a
		}
	}
	p.turn++
	return p.conns[p.turn%n]
}

// sibling sends c, which failed unsent on connection c.Owner, to another connection of the same
// endpoint that is live (adapterproxy.AdapterProxy.Live: open or dialling, and Active), the next
// in turn; it reports whether it did. Live rules out the connection that failed (a failed
// connection is idle when it hands its calls back) and never starts a dial, so such a move adds
// neither a request nor a connect for the endpoint: it is not a retry, and takes neither one of
// Options.Retries nor a token of the retry budget. It is bounded all the same: a call moves at
// most conns-1 times (c.Hops) per endpoint it is sent to, so calls on connections that keep
// failing (all dialling an endpoint that refuses) end after at most conns connections, then go to
// another endpoint or fail with their error. A call whose connection is no longer in the list
// (its endpoint left) is not moved.
func (o *ObjectProxy) sibling(c *call.Call, now int64) bool {
	failed, ok := c.Owner.(*adapterproxy.AdapterProxy)
	if !ok || int(c.Hops) >= o.conns-1 {
		return false
	}
	p := o.poolOf(c, failed)
	if p == nil {
		return false
	}
	n := uint32(len(p.conns))
	for range n {
		p.turn++
		if a := p.conns[p.turn%n]; a != failed && a.Live(now) {
			c.Hops++
			a.Send(c)
			return true
		}
	}
	return false
}

// poolOf returns the pool that holds connection a, looked for among the endpoints c was sent to
// (tried) first, then among all; nil when a is not in the list.
func (o *ObjectProxy) poolOf(c *call.Call, a *adapterproxy.AdapterProxy) *pool {
	for t := o.tried(c); t != 0; t &= t - 1 {
		for i := bits.TrailingZeros64(t); i < len(o.pools); i += 64 { // markTried's i%64
			if slices.Contains(o.pools[i].conns, a) {
				return &o.pools[i]
			}
		}
	}
	for i := range o.pools {
		if slices.Contains(o.pools[i].conns, a) {
			return &o.pools[i]
		}
	}
	return nil
}

// ok reports whether one of the pool's connections is healthy.
func (p *pool) ok(now int64) bool {
	for _, a := range p.conns {
		if a.Active(now) {
			return true
		}
	}
	return false
}

// load is the pool's latency, the mean over its connections that have one (a connection with no
// reply yet says nothing about the endpoint: counting it as 0 showed a slow endpoint's first reply
// at 1/N), and its calls in flight over all of them.
func (p *pool) load(now int64) (latency float64, inflight int) {
	sampled := 0
	for _, a := range p.conns {
		l, n := a.Load(now)
		if l > 0 {
			latency += l
			sampled++
		}
		inflight += n
	}
	if sampled > 1 {
		latency /= float64(sampled)
	}
	return latency, inflight
}

// poolPending is the calls in flight over endpoint i's connections (out of View.Inflight, which
// stays inlined for one connection).
func (o *ObjectProxy) poolPending(i int32) int {
	n := 0
	for _, a := range o.pools[o.ensure(i)].conns {
		n += a.Pending()
	}
	return n
}

// each runs fn on every connection of the current list.
func (o *ObjectProxy) each(fn func(a *adapterproxy.AdapterProxy)) {
	for i, a := range o.adapters {
		switch {
		case a == nil:
		case o.pools != nil:
			for _, c := range o.pools[i].conns {
				fn(c)
			}
		default:
			fn(a)
		}
	}
}
