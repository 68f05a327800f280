// Package adapterproxy owns one endpoint of one servant on one net thread: a single multiplexed
// TCP connection (or a connected UDP socket for a udp endpoint, one datagram per call: udp.go),
// connected on first use and reconnected after failure with backoff, the table of
// requests waiting for their reply, their deadlines (in the net thread's timing wheel), and the
// batch of encoded requests to write on the next flush.
//
// Everything here runs on the loop goroutine of the owning net thread; no method is safe for
// concurrent use, and none needs a lock. The net thread reaches an AdapterProxy through its
// ObjectProxy (Send) and through gnet's callbacks (OnOpen, OnTraffic, OnClose), whose connection
// context is the AdapterProxy.
//
// The AdapterProxy gives each call its request id when it queues it, writing the id into the
// frame the caller encoded (in place: the id field is a fixed 4 bytes); pending.go says how ids
// are chosen, for user calls, retries, backup requests and pings, and holds the table of calls
// waiting for their reply (add, take, drain, len), which is the only code that touches it.
//
// A short connection (Options.Short, short.go) is closed by this side once it holds no call;
// the next call connects again.
//
// A connection that is lost, or cannot be made, fails the calls written to it at once with an
// error matching call.ErrConnection, and moves or retries those not yet written; nobody waits
// for a timeout that cannot be met. (Calls on a connection being drained, or replaced after an
// unanswered health probe, wait for their replies or their deadlines.)
package adapterproxy
