// Package debugpage renders a stats.Snapshot for people: an http.Handler serving one HTML page
// (net threads, endpoints with their connection and health, per-function calls, errors by class
// and code, latency quantiles and a histogram chart per function, the effective configuration,
// and the balancers load-balance accepts), drawn on the server with html/template and inline SVG, needing nothing from
// the internet and no script; and the same data as JSON at "?format=json" (or a path ending in
// ".json").
//
// The library starts no HTTP server: mount the handler where you like,
//
//	http.Handle("/debug/tarscomm/", debugpage.Handler(comm.Stats, debugpage.Options{Config: comm.Config()}))
//
// Each request takes one snapshot from its source. The handler is safe for concurrent use.
package debugpage
