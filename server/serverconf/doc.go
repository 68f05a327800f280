// Package serverconf builds the project's TARS servers from their TOML configuration: the
// [server] table and its [[server.adapter]] tables of package conf. Each adapter becomes one
// server.Server listening on the adapter's endpoint, with the adapter's handler goroutines
// (threads, queuecap), TLS (ssl endpoints: cert, key, ca and verifyclient for mutual TLS,
// tls-min-version, tls-ciphers, handshake-timeout) and TARS authentication (-e 1: accesskey,
// secretkey), and the [server]'s netthread and max-packet-size. A udp endpoint serves TARS over
// datagrams (server's # UDP), without TLS or authentication.
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
//	srvs, err := serverconf.New(cfg.Server, server.WithLogger(log)) // options from code apply last, to every adapter
//	err = hellopb.RegisterGreeter(srvs.Server("Hello.Server.GreeterObj"), "Hello.Server.GreeterObj", greeter{})
//	err = srvs.Start() // every adapter, or none
//	defer srvs.Stop(ctx)
//
// Errors name the key as the file writes it: `serverconf: server.adapter[0].endpoint = "ssl -h
// 127.0.0.1 -p 0": an ssl endpoint needs cert and key ([server] or the adapter)`. A Servers is
// safe for concurrent use once New has returned; Start and Stop run once.
package serverconf
