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
// A lone call skips the wakeup: when the thread is quiet (nothing in flight), its caller takes
// the loop side's mutex, routes the call and writes it to the socket itself, and the loop only
// reads the reply (direct.go). Busy threads batch as above; a turn of replies is followed by a
// drain, without a wakeup, of what the callers it woke submitted meanwhile (handBack).
//
// Replies are parsed and matched on the loop; deadlines are swept by the loop whenever it runs
// (a wakeup, traffic, a close), and at least every timeout check interval, which one ticker
// goroutine per Thread asks for while calls wait (an idle loop is woken only for its
// connections' chores). A reply that arrives after its call's deadline ends the call
// with ErrTimeout: a call never succeeds late, however late the sweep. Dials run on
// short-lived goroutines (one per connection attempt, never per call) and enroll the connection
// with the loop.
//
// The thread's public face is for callers on any goroutine (New, NewObjectProxy, Submit, Execute,
// Snapshot, Close). What the AdapterProxies and ObjectProxies need from their loop
// (adapterproxy.Loop: flush scheduling, the clock, the timing wheel, dials) is an unexported type
// whose methods run on the loop only; Loop hands it to whoever builds ObjectProxies for the
// thread. Example (example_test.go) submits one hand-encoded call.
package netthread
