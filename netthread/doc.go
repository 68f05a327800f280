// Package netthread is a net thread of the Communicator: one gnet event loop goroutine that owns
// its connections, ObjectProxies and AdapterProxies, pending tables and timing wheel, and touches
// them without locks.
//
// Callers hand requests to a Thread with Submit, from any goroutine. A request is pushed onto a
// lock-free stack (no lock shared by callers, no allocation) and the loop is woken only when the
// stack goes from empty to non-empty and no wakeup is already on its way, so a burst of calls
// costs one wakeup. The loop drains the whole stack at once, routes every call to its
// ObjectProxy, and then writes each connection's share of the batch with one write.
//
// Replies are parsed and matched on the loop; deadlines are swept by the loop whenever it runs
// (a wakeup, traffic, a close), and at least every timeout check interval, which one ticker
// goroutine per Thread asks for. A reply that arrives after its call's deadline ends the call
// with ErrTimeout: a call never succeeds late, however late the sweep. Dials run on
// short-lived goroutines (one per connection attempt, never per call) and enroll the connection
// with the loop.
//
//	t, err := netthread.New(netthread.Options{Index: 0})
//	defer t.Close()
//	obj, err := t.NewObjectProxy(target, "roundrobin")
//	c.Dest = obj; c.ID = t.NextID()
//	err = t.Submit(c)
package netthread
