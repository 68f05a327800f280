package objectproxy

import (
	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
)

// Connections per endpoint (Options.Connections). The endpoint stays the unit of balancing: the
// pickers, the hash rings and the retry and backup rules see one endpoint, as in TarsCpp, and
// only then does the ObjectProxy choose one of that endpoint's connections, in turn, skipping
// the ones whose own health (each connection is an AdapterProxy with its own health rules,
// breaker and reconnect backoff) took them out. An endpoint is healthy while one of its
// connections is. With one connection per endpoint (the default) pools is nil and none of this
// runs.

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

// ok reports whether one of the pool's connections is healthy.
func (p *pool) ok(now int64) bool {
	for _, a := range p.conns {
		if a.Active(now) {
			return true
		}
	}
	return false
}

// load is the pool's mean latency and its calls in flight.
func (p *pool) load(now int64) (latency float64, inflight int) {
	for _, a := range p.conns {
		l, n := a.Load(now)
		latency += l
		inflight += n
	}
	return latency / float64(len(p.conns)), inflight
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
