package objectproxy

import (
	"fmt"
	"slices"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Options are what an ObjectProxy is built with; the Communicator fills them from the servant's
// config and naming.
type Options struct {
	// Balancer names the picker of the registry (Balancers) for the servant's calls; "" is
	// roundrobin. A hash balancer ("hash", "consistenthash") picks the calls that carry a hash
	// code and leaves the others to round robin; any other leaves hashed calls to the mod hash.
	Balancer string
	// Retries is how many other endpoints a call may try after failing before any of it was
	// written (a refused connection, a failed write); 0 turns retries off, as in TARS. Moving
	// such a call to another connection of the same endpoint (Connections > 1) is not a retry:
	// see Retry.
	Retries int
	// Guard is the endpoints' circuit breaker and the retry budget; zero: neither.
	Guard Guard
	// Await makes the ObjectProxy wait for its first list: calls routed before the first Install
	// are parked, each until that Install or its deadline, and the first of them runs Demand (on
	// the loop; it must not block; nil: nothing), which is how a lazy naming source learns it is
	// needed.
	Await  bool
	Demand func()
	// WaitReason gives a parked call's expiry its cause: when a call's deadline passes before the
	// first list, it fails with an error matching call.ErrTimeout and wrapping WaitReason()
	// (when not nil), e.g. the naming source's last failure. It runs on the loop and must not
	// block. nil: plain call.ErrTimeout.
	WaitReason func() error
	// NoEndpoint is what a call that finds no endpoint fails with: an error wrapping
	// call.ErrNoEndpoint that says why the list is empty. nil: call.ErrNoEndpoint itself.
	NoEndpoint error
	// Connections is how many connections (AdapterProxies) each endpoint gets on this net
	// thread; the calls the balancer sends to an endpoint go to its connections in turn, skipping
	// those whose health took them out, and a call that failed unsent on one of them moves to
	// another live one (conns.go). 0 or 1: one, as in TarsCpp.
	Connections int
	// Short makes every connection of the servant a short one: closed as soon as it holds no
	// call, dialled again by the next (adapterproxy.Options.Short).
	Short bool
	// Push receives the pushes and connection events of every AdapterProxy of this ObjectProxy
	// (adapterproxy.Options.Push); nil: pushes are logged and dropped. It is given here, at
	// construction, so that a connection never exists without it.
	Push adapterproxy.PushSink
	// Gone, if set, is told of each AdapterProxy of an endpoint that left the list once it is
	// forgotten (its calls done), on the loop goroutine: its counters end there (netthread keeps
	// them, so that an endpoint's counts do not start again from 0 when it comes back).
	Gone func(a *adapterproxy.AdapterProxy)
}

// ObjectProxy routes the calls of one servant on one net thread.
type ObjectProxy struct {
	// Immutable after New.
	name       string
	loop       adapterproxy.Loop
	opts       adapterproxy.Options // with the Guard's breaker
	retries    int
	why        func() error // why the first list is missing; nil: unknown
	noEndpoint error        // what a call without endpoint fails with; nil: call.ErrNoEndpoint

	// Owned by the loop goroutine.
	awaiting bool                         // no list installed yet: park calls
	demand   func()                       // run by the first parked call
	cur      *List                        // the current list, TarsCpp order (shared with the other threads)
	list     endpoints                    // cur's endpoints, read on the pick path
	adapters []*adapterproxy.AdapterProxy // adapters[i] serves endpoint i of list (its first connection)
	pools    []pool                       // conns > 1: pools[i] are endpoint i's connections; nil otherwise
	spare    struct {                     // the arrays of the list before, cleared, for the next (install)
		adapters []*adapterproxy.AdapterProxy
		pools    []pool
	}
	conns    int                                // connections per endpoint, at least 1
	view     View                               // what the pickers pick from (select.go)
	pickers  pickers                            // the servant's balancer (picker.go)
	retiring []*adapterproxy.AdapterProxy       // left the list, finishing their calls
	gone     adapterproxy.Stats                 // Traffic's counts of the AdapterProxies forgotten
	onGone   func(a *adapterproxy.AdapterProxy) // Options.Gone
	parked   map[*call.Call]struct{}            // calls waiting for the first list
	budget   retryBudget                        // budget.go
}

// New returns the ObjectProxy of target's servant on loop, with one AdapterProxy per endpoint of
// target, each built with ap (and the breaker of o.Guard). Safe to call off the loop; the
// ObjectProxy belongs to the loop afterwards. An unknown o.Balancer is an error naming the
// registered ones.
func New(target endpoint.Target, loop adapterproxy.Loop, ap adapterproxy.Options, o Options) (*ObjectProxy, error) {
	p, err := newPickers(o.Balancer)
	if err != nil {
		return nil, fmt.Errorf("objectproxy %s: %w", target.Object, err)
	}
	ap.Breaker = o.Guard.Breaker
	ap.Short = o.Short
	ap.Push = o.Push
	op := &ObjectProxy{
		name: target.Object, loop: loop, opts: ap, retries: o.Retries, onGone: o.Gone,
		why: o.WaitReason, noEndpoint: o.NoEndpoint,
		awaiting: o.Await, demand: o.Demand,
		pickers: p, budget: newRetryBudget(o.Guard), conns: max(o.Connections, 1),
	}
	op.view.o = op
	op.install(newList(slices.Clone(target.Endpoints), nil, true))
	return op, nil
}

// Name returns the servant name. Safe for concurrent use.
func (o *ObjectProxy) Name() string { return o.name }

// Traffic returns the writes, bytes written and read, and late replies of o's connections over
// its life: those of the AdapterProxies it has, of those finishing the calls of endpoints that
// left its list, and of those it forgot, so that totals summed from it never go down. Only those
// four fields are set. Must be called on the loop goroutine.
func (o *ObjectProxy) Traffic() adapterproxy.Stats {
	t := o.gone
	for _, a := range o.Adapters() {
		addTraffic(&t, a.Stats())
	}
	for _, a := range o.retiring {
		addTraffic(&t, a.Stats())
	}
	return t
}

// addTraffic adds s's traffic counts (Traffic's four fields) to t.
func addTraffic(t *adapterproxy.Stats, s adapterproxy.Stats) {
	t.Writes += s.Writes
	t.BytesOut += s.BytesOut
	t.BytesIn += s.BytesIn
	t.Late += s.Late
}

// Adapters returns the AdapterProxies of the current list, in TarsCpp order (see the package
// documentation), each endpoint's connections (Options.Connections) one after the other. Must
// be called on the loop goroutine.
func (o *ObjectProxy) Adapters() []*adapterproxy.AdapterProxy {
	out := make([]*adapterproxy.AdapterProxy, 0, len(o.adapters)*o.conns)
	for i, a := range o.adapters {
		switch {
		case a == nil:
		case o.pools != nil:
			out = append(out, o.pools[i].conns...)
		default:
			out = append(out, a)
		}
	}
	return out
}

// at returns the (first) AdapterProxy of list endpoint i, creating the endpoint's connections
// on first use: an inactive endpoint has none until it is picked.
func (o *ObjectProxy) at(i int32) *adapterproxy.AdapterProxy {
	if a := o.adapters[i]; a != nil {
		return a
	}
	return o.create(i)
}

// create is at's first use of endpoint i, kept out of line so that at inlines.
//
//go:noinline
func (o *ObjectProxy) create(i int32) *adapterproxy.AdapterProxy {
	return o.open(int(i), o.list.at(i), o.adapters, o.pools)
}

// Update replaces the endpoint list: active are the endpoints to balance over, inactive those a
// registry lists as registered but not active (kept so that mod-hash indices stay stable, as
// TarsCpp does; they get hashed calls only through the fallback's absence). Endpoints keep their
// AdapterProxy (and connection) across updates; endpoints that left stop getting calls now and
// close their connections once their calls have completed. Calls parked waiting for the first
// list are routed. Must be called on the loop goroutine.
func (o *ObjectProxy) Update(active, inactive []endpoint.Endpoint) {
	o.Install(NewList(slices.Clone(active), slices.Clone(inactive)))
}

// Install is Update with a list prepared by NewList, which every net thread's ObjectProxy of the
// servant may share. Must be called on the loop goroutine.
func (o *ObjectProxy) Install(l *List) {
	o.install(l)
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
			c.Delayed(o.loop.Now())
			c.Dest.Route(c) // o, or a Backup whose first call this is
		}
	}
	o.parked = nil // a map keeps its size: a burst parked before the first list lets it go
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
// fails with call.ErrTimeout, wrapping the reason Options.WaitReason gives.
func (o *ObjectProxy) Expire(c *call.Call) {
	delete(o.parked, c)
	if len(o.parked) == 0 {
		o.parked = nil
	}
	c.Owner = nil
	err := call.ErrTimeout
	if o.why != nil {
		if why := o.why(); why != nil {
			err = fmt.Errorf("%w waiting for the endpoint list: %w", call.ErrTimeout, why)
		}
	}
	c.Complete(err)
}

// Retry implements call.Router: c failed with err before any byte of it was written. A call whose
// deadline has passed fails with err. With several connections per endpoint (Options.Connections),
// c first moves to another live connection of the endpoint it failed on (sibling, conns.go): that
// is not a retry, and takes neither one of Options.Retries nor a token of the retry budget. Then
// it goes to an endpoint it has not tried yet if retries remain and the retry budget
// (Options.Guard) has a token (a hashed call to the one its code's fallback names, as the next
// calls with the code go while the endpoint it failed on is down); otherwise it fails with err.
// A call a stopping server refused unrun (c.Refused == 1) goes to an endpoint it has not tried,
// once, whatever Options.Retries and the budget say: it did not run, and its server is leaving
// (gRPC moves the calls a GOAWAY says were not processed so, brpc retries ELOGOFF). Must be
// called on the loop goroutine.
func (o *ObjectProxy) Retry(c *call.Call, err error) { o.retry(c, err) }

// retry is Retry, returning the index of the endpoint it sent c to, or -1 (c ended, or moved to
// another connection of the same endpoint).
func (o *ObjectProxy) retry(c *call.Call, err error) int {
	now := o.loop.Now()
	// A call its stopping server refused moves to another endpoint: no sibling connection of
	// the same one, and no retry taken.
	moved := c.Refused == 1
	if c.Deadline != 0 && c.Deadline <= now {
		fail(c, err, moved)
		return -1
	}
	c.Delayed(now) // it goes later than it was encoded: the server gets the time left
	if moved {
		c.Refused = 2
		c.Tries-- // send counts it again
	}
	if o.pools != nil {
		if !moved && o.sibling(c, now) {
			return -1
		}
		c.Owner, c.Hops = nil, 0 // on another endpoint, c has its connections to try
	}
	if !moved && int(c.Tries) > o.retries || len(o.cur.active) < 2 {
		fail(c, err, moved)
		return -1
	}
	// An endpoint first: a retry that has nowhere to go takes no token from the budget. A hashed
	// call goes where its code's fallback sends it (WithHash: one endpoint per code).
	i := -1
	if c.Hashed {
		i = o.pickUntriedHashed(c)
	}
	if i < 0 {
		i = o.pickUntried(c)
	}
	if i < 0 || !moved && !o.budget.withdraw(now) {
		fail(c, err, moved)
		return -1
	}
	o.send(c, i)
	return i
}

// fail ends c, which Retry could not send again, with err; a call a stopping server refused
// (refused, err its *call.ServerError) ends as the refusal's reply would have: its return code
// and description, for the caller, the interceptors and the stats alike.
func fail(c *call.Call, err error, refused bool) {
	if se, ok := err.(*call.ServerError); ok && refused {
		c.Ret, c.Desc = se.Code, se.Desc
		c.Complete(nil)
		return
	}
	c.Complete(err)
}

func (o *ObjectProxy) send(c *call.Call, i int) {
	c.Tries++
	o.markTried(c, int32(i))
	if o.pools != nil {
		o.conn(int32(i)).Send(c)
		return
	}
	o.at(int32(i)).Send(c)
}

// Tick runs the periodic chores of every endpoint's connection (keepalive, idle close), notices
// health changes for the selection, closes the connections of endpoints that left once their
// calls are done, and drops parked calls whose callers gave up. Must be called on the loop
// goroutine.
func (o *ObjectProxy) Tick(now int64) {
	o.each(func(a *adapterproxy.AdapterProxy) { a.Tick(now) })
	o.view.checkHealth(now)
	o.tickRetiring(now)
	for c := range o.parked {
		if c.Abandoned() {
			delete(o.parked, c)
			o.loop.Wheel().Remove(c)
			c.Owner = nil
			c.Complete(nil)
		}
	}
	if o.parked != nil && len(o.parked) == 0 {
		o.parked = nil
	}
}

// FailAll ends every call of every endpoint with err, and every parked call. Must be called on
// the loop goroutine.
func (o *ObjectProxy) FailAll(err error) {
	o.each(func(a *adapterproxy.AdapterProxy) { a.FailAll(err) })
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
	o.parked = nil
}
