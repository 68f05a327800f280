// Package objectproxy owns one servant on one net thread: its AdapterProxies (one per endpoint,
// or Options.Connections per endpoint) and the second layer of load balancing, which picks the
// AdapterProxy for each call. TarsCpp
// calls the picking part the EndpointManager; here it is the ObjectProxy's pickers and the
// endpoint list they pick from.
//
// An ObjectProxy is built off the loop (New, with Options; the Communicator builds one per net
// thread through Thread.NewObjectProxy and hands them to servantproxy.New) and used only on that
// loop goroutine afterwards: Route is the net thread's entry point for a call, and needs no
// lock.
//
// The endpoint list changes while calls run: Install (or Update), run on the loop, replaces it.
// The List it installs is built once per change, off the loops (NewList sorts it; Prepare builds
// what the servant's pickers read from it), and shared read only by every net thread; a loop only
// matches the endpoints it has connections for against it, in the number of those.
// An endpoint that leaves gets no new call from then on; the calls it holds complete (reply or
// deadline), and its connection is closed after them. An endpoint that joins connects on its
// first call. An unchanged list changes nothing.
//
// # Balancers
//
// A balancer is a Picker (picker.go): Build when the list changes, Pick per call on the loop,
// reading the list, the endpoints' health and load through a View, without allocating. Each
// algorithm is one file, and the registry in picker.go names them; conf's validation of
// load-balance (generated from it), the debug page and the docs read that registry
// (Balancers). Adding a balancer is a new file with its Picker and one registry line.
//
//   - roundrobin (roundrobin.go, the default): the healthy endpoints in turn, TarsCpp's
//     getNextValidProxy.
//   - weighted (staticweight.go): TarsCpp's static-weight list by -w. It is also the pick of
//     every call without a hash code when every active endpoint says -v 1, whatever the balancer, as in
//     TarsCpp.
//   - random (random.go): uniform among the healthy endpoints.
//   - hash (modhash.go): TarsCpp's mod hash, list[code % n] over every listed endpoint, active
//     or not in the registry, so that indices survive an endpoint going inactive; when every
//     active endpoint says -v 1, TarsCpp's getHashProxyForWeight: the code indexes the weighted list
//     (router[code % len], five equal weights giving 50 entries).
//   - consistenthash (ketama.go): the ketama ring over the active hosts, one node per host as
//     TarsGo's (TarsCpp 3.x keys it by endpoint description), weighted by -w under -v 1.
//   - least-inflight (leastinflight.go): the healthy endpoint with the fewest calls in flight.
//   - p2c (p2c.go): of two healthy endpoints drawn at random, the one of the lower peak-EWMA
//     latency x load cost.
//
// A call with a hash code (WithHash) goes to the servant's hash picker: consistenthash's ring if
// that is its balancer, the mod hash otherwise; a hash balancer spreads calls without a hash code
// round robin. Endpoints are ordered by TarsCpp's key ("istcp:host:port") for both.
//
// Health (the AdapterProxy's rules, a reconnect backoff) is checked for the endpoint picked, and
// the set of healthy endpoints (View.Up) is refreshed on the thread's chores, not per pick. A
// hashed call whose endpoint is inactive or unhealthy is re-hashed over the healthy active ones
// (TarsCpp's fallback code), or under consistenthash goes to the next healthy host along the ring: with one endpoint stopped, its codes move to the others as soon as
// this side sees it fail, and come back when it recovers. A real TarsCpp client keeps sending
// them to the stopped endpoint until each call fails its connect timeout; tarscomm deliberately
// does not. With no healthy endpoint, calls still go to one, in turn: that is how a blocked
// endpoint gets its retry.
//
// # Connections per endpoint
//
// Options.Connections (the servant's `connections`, default 1) gives every endpoint that many
// AdapterProxies, each with its own connection, pending table, health rules, breaker and
// reconnect backoff (conns.go). The endpoint stays the unit of balancing: the picker chooses the
// endpoint as above (an endpoint is healthy while one of its connections is; its load is the sum
// of their calls in flight and the mean latency of those that have one), so the balancers, the
// hash pickers and the retry and backup rules behave as with one connection; then the
// endpoint's connections are taken in turn, skipping those that are not healthy (with none healthy, the next in turn, so
// that a blocked one gets its retry). A connection that fails is thus taken out like an endpoint
// is, and the others keep serving. The calls that waited on it unsent (its dial failed, or it
// closed before writing them) move to another of the endpoint's connections that is open or
// dialling, before Retry considers other endpoints; such a move is not a retry (it needs no
// `retries` and no budget token) and a call makes at most N-1 of them per endpoint (Retry,
// conns.go). The price: each connection learns by itself that its
// endpoint is down, so a stopped endpoint costs up to N failed connects (and the calls on them)
// before it is skipped, where one connection costs one. Adapters lists every connection, an endpoint's one after the
// other; the net thread's stats sum them into one entry per endpoint. With one connection none of
// this runs (the pools are nil).
//
// # Before the first list
//
// A servant whose list is not known yet (a registry query under way) parks its calls until the
// first list arrives, each within its own deadline; Options.Await turns that on, and
// Options.WaitReason says why a parked call whose deadline passed is still waiting (the naming
// source's failure), so that its ErrTimeout carries the cause.
package objectproxy
