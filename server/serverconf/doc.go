// Package serverconf builds the project's TARS servers from their TOML configuration: the
// [server] table and its [[server.adapter]] tables of package conf. Each adapter becomes one
// server.Server listening on the adapter's endpoint, with the adapter's handler goroutines
// (threads, queuecap, queuetimeout), TLS (ssl endpoints: cert, key, ca and verifyclient for mutual TLS,
// tls-min-version, tls-ciphers, handshake-timeout) and TARS authentication (-e 1: accesskey,
// secretkey), and the [server]'s netthread, max-packet-size and frame-budget (server's
// WithFrameBudget, for each adapter's server: 0 its default, -1 none). A udp endpoint serves
// TARS over datagrams (server's # UDP), without TLS or authentication.
//
// # Limits
//
// An adapter's connection limits (server's # Limits) follow TarsCpp's keys and rules, with two
// defaults chosen for a file that does not set them:
//
//   - maxconns: no limit (0 or -1). TarsCpp's Application falls back to 128, which TARS
//     deployments raise in their templates; a file written for this server that forgot the key
//     should not refuse its 129th client.
//   - the endpoint's -t, the idle timeout: 60000 ms when absent, what TARS deployments write on
//     their adapters' endpoints (TC_Endpoint's own default, 3000 ms, races the clients' idle
//     close at the same -t), counted in whole seconds as TC_EpollServer does, so that -t 0, or
//     any value below 1000, never closes an idle connection.
//   - backpacketlimit and backpacketmin, TarsCpp's slow-reader rule: 100 MiB and 1024 bytes
//     (TarsCpp reads them from its <server> section with these defaults; here they are adapter
//     keys); backpacketlimit = -1 turns the rule off.
//   - maxbacklog, this server's hard cap on a connection's unsent reply bytes:
//     server.DefaultMaxBacklog (256 MiB); -1 removes it.
//
// 0 in any of these keys means its default (for maxconns: no limit). Options from code apply after the file's and
// override them (server.WithMaxConns(0) lifts the limit).
//
// # Why a package of its own
//
// server is an engine package and, like every engine package, takes plain values from code
// (Options) and never reads conf; conf is a leaf that parses and validates TOML and knows nothing
// of servers. Turning the one into the other (parsing endpoints, reading PEM files, choosing
// between tcp, ssl and -e 1) is wiring, the job communicator does for the client. Here it is
// done once, for every program that serves from a file, above both, so that neither server nor
// conf gains an import.
//
// # Use
//
//	cfg, err := conf.Load("server.toml")
//	srvs, err := serverconf.New(cfg.Server, server.WithLogger(logger)) // options from code apply last, to every adapter
//	err = hellopb.RegisterGreeter(srvs.Server("Hello.Server.GreeterObj"), "Hello.Server.GreeterObj", greeter{})
//	err = srvs.Start() // every adapter, or none
//	defer srvs.Stop(ctx)
//
// Errors name the key as the file writes it: `serverconf: server.adapter[0].endpoint = "ssl -h
// 127.0.0.1 -p 0": an ssl endpoint needs cert and key ([server] or the adapter)`. A Servers is
// safe for concurrent use once New has returned; Start and Stop run once.
package serverconf
