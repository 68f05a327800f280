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
//   - etcd, in the module github.com/tarscomm/tarscomm/etcd, so that this module does not depend
//     on an etcd client.
//
// A Manager is TarsCpp's EndpointManager for one servant: it starts the source when the
// servant's first call needs it, drops answers equal to the last one, and hands each new list to
// a push function (the Communicator's, which hands it to the servant's ObjectProxy on every net
// thread). A source that implements Reporter also tells the Manager why it has no list (a failed
// registry query, an unreadable file): Manager.Err returns it, matching ErrNaming, and a call that
// ends waiting for the first list carries it.
package naming
