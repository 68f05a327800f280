// Package etcd is a naming source over etcd, and the registration of a server's endpoint in
// it: servers put their endpoints under a lease, clients follow them with etcd's watch API.
// It is a module of its own (github.com/tarscomm/tarscomm/etcd) so that the tarscomm module
// does not depend on an etcd client.
//
// # Key layout
//
// One key per endpoint of an object:
//
//	<prefix>/<object>/<host:port>  ->  <TARS endpoint string>
//
// for example
//
//	/tars/App.Server.EchoObj/10.0.0.1:9000  ->  tcp -h 10.0.0.1 -p 9000 -t 60000
//	/tars/App.Server.EchoObj/10.0.0.2:9000  ->  tcp -h 10.0.0.2 -p 9000 -t 60000 -s app.sz.1
//
// The value is one endpoint in TARS endpoint syntax (endpoint.ParseEndpoint), so every option
// of a proxy string's endpoint may be given: -t, -w and -v (static weights), -e, and -s, the
// set ("name.area.group") the endpoint belongs to. The last part of the key only makes the key
// unique: the value is what clients use. A value that does not parse is skipped (and logged).
// Keys are written by Register with a lease, or by hand (etcdctl put) without one.
//
// # Discovery
//
// Source implements naming.Source: a Watch reads <prefix>/<object>/ with one Get and then
// watches the prefix from the revision after it, so that no change is missed. Every change
// pushes the whole list, in key order (so that hash routing sees one order on every client).
// Pushes are debounced: the first change starts a window (Debounce, 100ms by default, see
// WithDebounce) and the list is pushed when it ends, so a burst of changes gives one push and a
// steady stream at most one per window. If
// the watch fails (the connection to etcd is lost, the member loses its leader, or the revision
// was compacted, or etcd came back without its data: every 5 s a watch reads the object's keys,
// and a revision older than one already seen, or keys other than the watch's at the revision
// it has reached, mean the history was lost), the Source reads the prefix again and watches from
// there, retrying with backoff; while etcd cannot be reached the last list stays in force. Each
// failure is reported (naming.Reporter): a call that ends waiting for its first list wraps the
// last one (an unreachable etcd's connection error; the first reads are bounded at 1 s so that a
// call with the default 3 s timeout learns it), and logged once until it changes (a warning, and
// an info line when etcd answers again).
//
// When the Query has a set (set routing on), the Source selects as the TARS registry does for
// findObjectByIdInSameSet (naming.SelectSet, shared by every source): if no endpoint of the
// object is in a set of that set name, the set is not used and every endpoint is listed; a group
// "*" lists every endpoint of the same name and area; otherwise the endpoints of exactly that
// set. Without a set every endpoint is listed. An
// object with no key has an empty list: its calls fail with communicator.ErrNoEndpoint.
//
// # Registration
//
// Register puts a server's endpoint under a lease of the given TTL and keeps the lease alive
// until Deregister (a graceful stop deletes the key, unless it no longer holds this
// registration's lease: a newer registration of the same endpoint, or a put by hand, rewrote it;
// and revokes the lease at once) or until
// the etcd client is closed. A server that dies stops renewing its lease, and etcd deletes its
// key when the lease expires: the endpoint leaves every client's list within the TTL. If the
// lease is lost while the server lives (etcd unreachable for longer than the TTL, or the lease
// revoked by someone else), Register's keeper grants a new lease and puts the key again.
//
// The package Example shows a registration and a client following it.
//
// # Selected by name
//
// Importing this package registers the naming scheme "etcd" (naming.Register), so that the
// Communicator's naming key selects it without code:
//
//	naming = "etcd://10.0.0.1:2379,10.0.0.2:2379/tars?debounce=100ms"
//
// The Communicator then makes an etcd client of those members (plain http, no authentication)
// and a Source over the keys under the path ("/tars" when there is none), and closes the client
// at Close. For TLS or authentication build the client in code and pass
// communicator.WithNaming(etcd.New(cli, prefix)).
package etcd
