// Package dns is a naming source over DNS: it resolves a host name (A and AAAA records, with the
// port given) or an SRV name (whose records give the hosts and their ports), and resolves it
// again on an interval, pushing the address list whenever it changes. This is what a Kubernetes
// headless service needs: its name resolves to the addresses of its ready pods.
//
// # Naming addresses
//
// The Communicator's naming key selects it by scheme (both registered by this package, which the
// Communicator imports):
//
//	naming = "dns://greeter.default.svc.cluster.local:9000"
//	naming = "dns+srv://_tars._tcp.greeter.default.svc.cluster.local"
//	naming = "dns://{server}.{app}.svc.cluster.local:9000?interval=5s&resolver=10.96.0.10:53"
//
// dns:// takes "host:port" and resolves host's A and AAAA records: one endpoint per address,
// all on port. dns+srv:// takes an SRV name: the records of the lowest priority are kept (their
// weights are not used: the servant's balancer spreads the calls), each target is resolved to
// its addresses, and each address gets its record's port (a target the resolver says has no
// address is skipped; one whose lookup gets no answer fails the resolution, which keeps the last
// list). The lists are sorted (by address,
// then port), so that every client sees one order and hash routing agrees between them. The
// endpoints are plain tcp ("tcp -h <address> -p <port>"); they carry no set, so a query's set
// selects nothing out (naming.SelectSet: no endpoint is in the set's name).
//
// The host may hold the placeholders {app}, {server} and {servant}: each servant then resolves
// its own name, built from the three parts of its object name "App.Server.Servant" (in lower
// case, as DNS and Kubernetes names are). Without placeholders every servant resolved through
// the source gets the same list: a Communicator that calls one service.
//
// Options, in the query string:
//
//   - interval: how often the name is resolved again (default 10s, the least 10ms; the
//     configuration's refresh-endpoint-interval, a registry's, does not apply);
//   - timeout: the bound of one resolution (default 5s);
//   - resolver: the DNS server, "host:port", asked over UDP (and TCP when an answer is
//     truncated); by default the system's (/etc/resolv.conf), with its search domains.
//
// # Failures
//
// A resolution that fails (NXDOMAIN, no record, the resolver down or not answering within the
// timeout) changes nothing: the last list stays in force, and the failure is logged (a warning,
// once per distinct failure, and an info line when resolution works again) and reported to the
// watch (naming.Reporter), so that a call waiting for its servant's first list fails saying why.
// So an endpoint disappears only when a resolution succeeds without it.
package dns
