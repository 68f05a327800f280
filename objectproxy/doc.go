// Package objectproxy owns one servant on one net thread: its AdapterProxies (one per endpoint)
// and the second layer of load balancing, which picks the AdapterProxy for each call. TarsCpp
// calls the picking part the EndpointManager; here it is the ObjectProxy's balancer plus the
// endpoint list it balances over.
//
// An ObjectProxy is built off the loop by its net thread and used only on that loop goroutine
// afterwards: Route is the net thread's entry point for a call, and needs no lock.
//
// Calls with a hash code go to the endpoint the hash selects (the same key always reaches the
// same endpoint while the endpoint list is unchanged); the others use the servant's balancer
// (round-robin by default). Endpoints whose reconnect backoff is running are skipped while
// another endpoint is usable.
package objectproxy
