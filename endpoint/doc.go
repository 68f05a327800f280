// Package endpoint holds the addresses of TARS servants and the choice among them: endpoint
// values, the parser for TARS proxy strings ("Obj@tcp -h H -p P -t T:..."), and the balancing
// algorithms an ObjectProxy's EndpointManager uses for the second layer of TARS load balancing.
//
// It is a leaf: it imports only the standard library, so objectproxy, server, communicator and
// tools can all use it.
//
// # Who calls what
//
// Parse, ParseEndpoint and the Endpoint and Target values are safe for concurrent use; the values
// are plain data. A Balancer is not: NewBalancer returns a fresh one for each ObjectProxy, and
// that ObjectProxy's net thread alone calls its Pick, without locks and without allocation.
//
// # Grammar
//
// The grammar is TarsCpp's (TC_Endpoint::parse, TC_Endpoint::sepEndpoint and
// QueryEpBase::setObjName): an object name, optionally "#tag", then optionally '@' and endpoints
// separated by ':'. Each endpoint is a protocol word and one-letter options:
//
//	Hello.Server.GreeterObj@tcp -h 10.0.0.1 -p 18015 -t 60000:tcp -h ::1 -p 18015 -w 50 -v 1
//
// See ParseEndpoint for the options and Parse for how ':' inside IPv6 hosts is told apart from the
// separator.
//
// # Example
//
//	t, err := endpoint.Parse("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015")
//	if err != nil { ... }                 // *endpoint.SyntaxError naming the bad part
//	b, err := endpoint.NewBalancer(cfg.LoadBalance)
//	nodes := []endpoint.Node{{Endpoint: t.Endpoints[0], Active: true}}
//	i := b.Pick(nodes, 0)                 // on the net thread
package endpoint
