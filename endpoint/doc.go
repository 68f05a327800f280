// Package endpoint holds the addresses of TARS servants: endpoint values, the parser for TARS
// proxy strings ("Obj@tcp -h H -p P -t T:..."), and the TarsCpp parity helpers the balancers of
// package objectproxy build on: TarsCpp's endpoint order (SortTars, TarsKey), its static-weight
// list (StaticWeightList), each checked against TarsCpp's vectors, and the ketama ring (Ketama),
// one node per host as TarsGo builds it (TarsCpp 3.x keys it by endpoint description).
// The balancers themselves (the pickers, their registry of names) are objectproxy's: they run
// on the net thread, beside the connections whose health they read.
//
// It is a leaf: it imports only the standard library, so objectproxy, server, communicator and
// tools can all use it.
//
// # Who calls what
//
// Parse, ParseEndpoint and the Endpoint and Target values are safe for concurrent use; the values
// are plain data. StaticWeightList and NewKetama build new values; a Ketama is immutable and safe
// for concurrent use.
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
//	endpoint.SortTars(t.Endpoints)        // the order TarsCpp's mod hash indexes into
package endpoint
