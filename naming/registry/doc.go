// Package registry is the naming source of a TARS deployment: the registry's query object
// (tars.tarsregistry.QueryObj, interface QueryF), called through tarscomm's own client.
//
// A watch asks findObjectByIdInSameGroup(obj), or findObjectByIdInSameSet(obj, set) when set
// routing is on, at once and then on TarsCpp's schedule:
//
//   - after an answer with active endpoints: every Refresh (refresh-endpoint-interval; a value of
//     1s means 1s);
//   - after an answer whose active list is empty: the last good list stays, retry in 10s (an
//     object never seen gets the empty list, so its calls fail with ErrNoEndpoint);
//   - after a failure (an error, a non-zero return code, or no answer within 5s): the last good
//     list stays, retry in 2s, and every 30s after more than 3 failures in a row.
//
// An object's queries are hashed by it, so they go through one net thread and one locator
// endpoint; one that fails on a refused or lost connection is asked again at once of the next
// locator endpoint, up to once per other one: a dead registry among live ones costs a query no
// failure. After a query that brought no active endpoint (a return code, no answer in time, an
// empty list), the object's next query goes to the next locator endpoint, as TarsCpp's round
// robin over the locator would: a registry that answers but cannot serve is not asked alone.
//
// Inactive endpoints are passed on with the active ones, for hash stability, as TarsCpp keeps
// them. Both lists are passed on in TarsCpp's order (endpoint.SortTars), whatever the registry's:
// the same endpoints listed in another order are the same list. udp (istcp 0), tcp (istcp 1) and ssl (istcp 2) endpoints are used; one with another istcp,
// no usable host and port, a host or set name that is not UTF-8, or fields its string form cannot
// carry (a host with white space, a negative timeout, a set name with ':':
// endpoint.Endpoint.Check) is skipped, and the first is logged. A Registry is a naming.Reporter:
// each failed query is reported to the watch, so that a call still waiting for its first list when
// its deadline passes fails with naming.ErrNaming wrapping the failure. With a cache file, the
// last good answer per object is written there when it changes, and a watch starts from it, as
// TarsCpp's does: its list is pushed before the first query, so that calls are not held by a
// slow or dead registry, nor failed by an empty answer (the registry's first list with active
// endpoints replaces it). The file is read again when another Registry or process rewrote it.
package registry
