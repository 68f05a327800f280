// Package objectproxy owns one servant on one net thread: its AdapterProxies (one per endpoint)
// and the second layer of load balancing, which picks the AdapterProxy for each call. TarsCpp
// calls the picking part the EndpointManager; here it is the ObjectProxy's selection plus the
// endpoint list it selects from.
//
// An ObjectProxy is built off the loop by its net thread and used only on that loop goroutine
// afterwards: Route is the net thread's entry point for a call, and needs no lock.
//
// The endpoint list changes while calls run: Update, run on the loop, replaces it. Selection
// structures (the round-robin list, TarsCpp's static-weight list, the mod-hash order, the
// ketama ring) are built once per change, so a pick costs the same for ten endpoints as for ten
// thousand. An endpoint that leaves gets no new call from then on; the calls it holds complete
// (reply or deadline), and its connection is closed after them. An endpoint that joins connects
// on its first call. An unchanged list changes nothing.
//
// Selection agrees with TarsCpp on the same list: endpoints are ordered by TarsCpp's key
// ("istcp:host:port"); calls with a hash code go to list[code % n] over every listed endpoint,
// active or not in the registry, with TarsCpp's fallback over the active ones, or to the ketama
// ring with consistent hashing; calls without one go round robin over the active endpoints, or
// along TarsCpp's static-weight list when every endpoint says -v 1 (or the servant's balancer is
// "weighted"). Health (the AdapterProxy's rules) is checked for the endpoint picked, and the set
// of healthy endpoints is refreshed on the thread's chores, not per pick.
//
// A servant whose list is not known yet (a registry query under way) parks its calls until the
// first list arrives, each within its own deadline; Await turns that on, and WaitReason says why
// a parked call whose deadline passed is still waiting (the naming source's failure), so that
// its ErrTimeout carries the cause.
package objectproxy
