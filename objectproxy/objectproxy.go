package objectproxy

import (
	"fmt"
	"math/rand/v2"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Selection modes, from the servant's balancer name.
const (
	modeRoundRobin = iota
	modeWeighted
	modeRandom
	modeHash
	modeConsistentHash
	modeLeastInflight // load.go
	modeP2C           // load.go
)

// ObjectProxy routes the calls of one servant on one net thread.
type ObjectProxy struct {
	// Immutable after New.
	name    string
	loop    adapterproxy.Loop
	opts    adapterproxy.Options
	retries int
	mode    int

	// Set by Await and WaitReason before the first call; read on the loop.
	awaiting bool
	demand   func()
	why      func() error // why the first list is missing (WaitReason); nil: unknown

	// Set by NoEndpointReason before the first call: what a call without endpoint fails with.
	noEndpoint error

	// Owned by the loop goroutine.
	list     endpoints                    // the current list, TarsCpp order
	adapters []*adapterproxy.AdapterProxy // adapters[i] serves list.eps[i]
	sel      selection
	retiring []*adapterproxy.AdapterProxy // left the list, finishing their calls
	parked   map[*call.Call]struct{}      // calls waiting for the first list
	rng      *rand.Rand
	scratch  []int32
	budget   retryBudget // budget.go
}

// New returns the ObjectProxy of target's servant on loop, with one AdapterProxy per endpoint of
// target. balancer names the load-balancing algorithm for calls without a hash code ("" is
// round-robin); hashed calls use the ketama ring when balancer is "consistenthash", and TarsCpp's
// mod hash otherwise. Safe to call off the loop; the ObjectProxy belongs to the loop afterwards.
//
// retries is how many other endpoints a call may try after failing before any of it was
// written (a refused connection, a failed write); 0 turns retries off, as in TARS.
func New(target endpoint.Target, balancer string, retries int, loop adapterproxy.Loop, opts adapterproxy.Options) (*ObjectProxy, error) {
	mode := modeRoundRobin
	switch balancer {
	case "", "roundrobin":
	case "weighted":
		mode = modeWeighted
	case "random":
		mode = modeRandom
	case "hash":
		mode = modeHash
	case "consistenthash":
		mode = modeConsistentHash
	case "least-inflight":
		mode = modeLeastInflight
	case "p2c":
		mode = modeP2C
	default:
		_, err := endpoint.NewBalancer(balancer) // its error names the accepted ones
		if err == nil {
			err = fmt.Errorf("balancer %q not supported by objectproxy", balancer)
		}
		return nil, fmt.Errorf("objectproxy %s: %w", target.Object, err)
	}
	o := &ObjectProxy{
		name: target.Object, loop: loop, opts: opts, retries: retries, mode: mode,
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	o.update(target.Endpoints, nil)
	return o, nil
}

// Name returns the servant name. Safe for concurrent use.
func (o *ObjectProxy) Name() string { return o.name }

// Await makes the ObjectProxy wait for its first list: calls routed before the first Update are
// parked, each until that Update or its deadline, and the first of them runs demand (on the
// loop; it must not block), which is how a lazy naming source learns it is needed. It must be
// called before any call is routed here and before the first Update, by whoever built the
// ObjectProxy.
func (o *ObjectProxy) Await(demand func()) {
	o.awaiting, o.demand = true, demand
}

// WaitReason gives a parked call's expiry its cause: when a call's deadline passes before the
// first list, it fails with an error matching call.ErrTimeout and wrapping why() (when not nil),
// e.g. the naming source's last failure. why runs on the loop and must not block. Like Await, it
// must be called before any call is routed here.
func (o *ObjectProxy) WaitReason(why func() error) { o.why = why }

// NoEndpointReason makes a call that finds no endpoint fail with err, which should wrap
// call.ErrNoEndpoint and say why the list is empty, in place of call.ErrNoEndpoint itself. It
// must be called before any call is routed here.
func (o *ObjectProxy) NoEndpointReason(err error) { o.noEndpoint = err }

// Adapters returns the AdapterProxies of the current list, in TarsCpp order (see the package
// documentation). Must be called on the loop goroutine.
func (o *ObjectProxy) Adapters() []*adapterproxy.AdapterProxy {
	out := make([]*adapterproxy.AdapterProxy, 0, len(o.adapters))
	for _, a := range o.adapters {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}

// at returns the AdapterProxy of list endpoint i, creating it on first use: an inactive
// endpoint has none until it is picked.
func (o *ObjectProxy) at(i int32) *adapterproxy.AdapterProxy {
	a := o.adapters[i]
	if a == nil {
		a = adapterproxy.New(o.list.eps[i], o.name, o.loop, o.opts) // o.opts carries SetTail's breaker
		o.adapters[i] = a
	}
	return a
}

// Update replaces the endpoint list: active are the endpoints to balance over, inactive those a
// registry lists as registered but not active (kept so that mod-hash indices stay stable, as
// TarsCpp does; they get hashed calls only through the fallback's absence). Endpoints keep their
// AdapterProxy (and connection) across updates; endpoints that left stop getting calls now and
// close their connections once their calls have completed. Calls parked waiting for the first
// list are routed. Must be called on the loop goroutine.
func (o *ObjectProxy) Update(active, inactive []endpoint.Endpoint) {
	o.Install(NewList(active, inactive))
}

// Install is Update with a list prepared by NewList, which every net thread's ObjectProxy of the
// servant may share. Must be called on the loop goroutine.
func (o *ObjectProxy) Install(l *List) {
	o.install(l.l)
	o.awaiting = false
	o.demand = nil
	if len(o.parked) > 0 {
		w := o.loop.Wheel()
		for c := range o.parked {
			delete(o.parked, c)
			w.Remove(c)
			c.Owner = nil
			if c.Abandoned() {
				c.Complete(nil)
				continue
			}
			o.Route(c)
		}
	}
}

// Route picks the AdapterProxy for c and hands c to it. A servant without endpoints fails c with
// call.ErrNoEndpoint at once; one waiting for its first list parks c. Must be called on the loop
// goroutine.
func (o *ObjectProxy) Route(c *call.Call) {
	if o.awaiting {
		o.park(c)
		return
	}
	o.routeOne(c)
}

// routeOne picks c's endpoint and sends it there; it returns the list index picked, or -1 when
// c was completed instead.
func (o *ObjectProxy) routeOne(c *call.Call) int {
	i := o.pick(c)
	if i < 0 {
		err := call.ErrNoEndpoint
		if o.noEndpoint != nil {
			err = o.noEndpoint
		}
		c.Complete(err)
		return -1
	}
	o.budget.deposit()
	o.send(c, i)
	return i
}

// park holds c until the first list or its deadline.
func (o *ObjectProxy) park(c *call.Call) {
	if d := o.demand; d != nil {
		o.demand = nil
		d()
	}
	if o.parked == nil {
		o.parked = make(map[*call.Call]struct{})
	}
	o.parked[c] = struct{}{}
	c.Owner = o
	if c.Deadline != 0 {
		o.loop.Wheel().Add(c)
	}
}

// Expire implements call.Owner for parked calls: c's deadline passed before the first list. It
// fails with call.ErrTimeout, wrapping the reason WaitReason gives.
func (o *ObjectProxy) Expire(c *call.Call) {
	delete(o.parked, c)
	c.Owner = nil
	err := call.ErrTimeout
	if o.why != nil {
		if why := o.why(); why != nil {
			err = fmt.Errorf("%w waiting for the endpoint list: %w", call.ErrTimeout, why)
		}
	}
	c.Complete(err)
}

// Retry implements call.Router: c failed with err before any byte of it was written. It goes to
// an endpoint it has not tried yet if retries remain, its deadline has not passed and the retry
// budget (SetTail) has a token; otherwise it fails with err. Must be called on the loop goroutine.
func (o *ObjectProxy) Retry(c *call.Call, err error) {
	if int(c.Tries) > o.retries || len(o.adapters) < 2 || (c.Deadline != 0 && c.Deadline <= o.loop.Now()) || !o.budget.withdraw(o.loop.Now()) {
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
	o.at(int32(i)).Send(c)
}

// Tick runs the periodic chores of every endpoint's connection (keepalive, idle close), notices
// health changes for the selection, closes the connections of endpoints that left once their
// calls are done, and drops parked calls whose callers gave up. Must be called on the loop
// goroutine.
func (o *ObjectProxy) Tick(now int64) {
	for _, a := range o.adapters {
		if a != nil {
			a.Tick(now)
		}
	}
	o.sel.checkHealth(o, now)
	o.tickRetiring(now)
	for c := range o.parked {
		if c.Abandoned() {
			delete(o.parked, c)
			o.loop.Wheel().Remove(c)
			c.Owner = nil
			c.Complete(nil)
		}
	}
}

// FailAll ends every call of every endpoint with err, and every parked call. Must be called on
// the loop goroutine.
func (o *ObjectProxy) FailAll(err error) {
	for _, a := range o.adapters {
		if a != nil {
			a.FailAll(err)
		}
	}
	for _, a := range o.retiring {
		a.FailAll(err)
	}
	w := o.loop.Wheel()
	for c := range o.parked {
		delete(o.parked, c)
		w.Remove(c)
		c.Owner = nil
		c.Complete(err)
	}
}
