// Package naming finds a servant's endpoints and follows them as they change: the naming
// sources behind one small interface, and the Manager that owns one servant's list.
//
// A Source answers a Query (an object, and the set when set routing is on) with Lists of
// endpoints, pushed whenever the list changes. The sources are:
//
//   - Static: the endpoints written in a proxy string ("Obj@tcp -h ..."), which never change;
//   - naming/registry: the TARS registry (QueryF findObjectByIdInSameGroup/InSameSet), refreshed
//     on TarsCpp's schedule, with an optional endpoint cache;
//   - naming/file: a file of proxy strings, reloaded within a second of a change;
//   - naming/dns: a DNS name (A/AAAA, or SRV), resolved again on an interval;
//   - etcd, in the module github.com/tarscomm/tarscomm/etcd, so that this module does not depend
//     on an etcd client.
//
// # Sources chosen by name
//
// A source registers a Builder for its scheme in its init function (Register, as gRPC's resolver
// registry); Build makes the Source of a naming address "scheme://..." (the Communicator's
// "naming" key) with the Builder of its scheme, and an unknown scheme is an error naming the
// registered ones. This package imports none of its sources: the Communicator imports the core
// ones (schemes "tars", "file", "dns", "dns+srv"), and the etcd module registers "etcd" when it
// is imported. A Source a Builder returns that implements io.Closer is closed by its owner.
//
// Sources that know the set of each endpoint (-s) select a query's endpoints with SelectSet, the
// TARS registry's findObjectByIdInSameSet rules, so that every source routes sets alike.
//
// A Manager is TarsCpp's EndpointManager for one servant: it starts the source when the
// servant's first call needs it, drops answers equal to the last one, and hands each new list to
// a push function (the Communicator's, which hands it to the servant's ObjectProxy on every net
// thread). A source that implements Reporter also tells the Manager why it has no list (a failed
// registry query, an unreadable file): Manager.Err returns it, matching ErrNaming, and a call that
// ends waiting for the first list carries it.
package naming
