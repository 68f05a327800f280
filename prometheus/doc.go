// Package tarsprom exposes tarscomm's stats to Prometheus: a prometheus.Collector over a
// func() stats.Snapshot (Communicator.Stats), read at each scrape. It is a Go module of its own
// so that client_golang never enters the library's go.mod. A snapshot that lacks a net thread
// (one that did not answer within a second, or one stopping while Close runs) is not exposed: a
// scrape then shows the last snapshot that held every thread, so that no counter goes down.
// After Close, a scrape shows the final counts.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(tarsprom.NewCollector(comm.Stats, tarsprom.Options{}))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Metrics, with namespace "tarscomm" and subsystem "client" by default (Options.Side "server"
// for a server's stats):
//
//	tarscomm_client_calls_total{servant,function,endpoint,result}         counter
//	tarscomm_client_server_errors_total{servant,function,endpoint,code}   counter
//	tarscomm_client_call_duration_seconds{servant,function,endpoint}      histogram of successful calls
//	tarscomm_netthread_queue_depth{thread}                                gauge
//	tarscomm_netthread_{wakeups,batches,requests,writes}_total{thread}    counters
//	tarscomm_netthread_{hand_backs,direct_requests}_total{thread}         counters
//	tarscomm_netthread_{sent,received}_bytes_total{thread}                counters
//	tarscomm_netthread_late_replies_total{thread}                         counter
//	tarscomm_endpoint_pending{servant,endpoint,thread}                    gauge
//	tarscomm_endpoint_active{servant,endpoint,thread}                     gauge, 1 or 0
//	tarscomm_endpoint_state{servant,endpoint,thread,state}                gauge, 1 for the current state
//	tarscomm_endpoint_{sent,replies,late_replies,connection_losses}_total{servant,endpoint,thread}
//	tarscomm_endpoint_{timeouts,connect_failures,reconnects,deactivations,stop_refused}_total{servant,endpoint,thread}
//	tarscomm_endpoint_{bad_datagrams,pushes,pushes_dropped}_total{servant,endpoint,thread}
//
// result is a stats.Result name: ok, timeout, connection, queue_full, no_endpoint, overload,
// server_error, closed, cancelled, refused. code is a TARS return code, or "other" for the codes
// past the first stats.MaxCodes of a (servant, function, endpoint) (a server chooses its codes);
// function is "(other)" (stats.OtherFunctions) for the functions past the first
// stats.MaxFunctions a net thread counted for a (servant, endpoint) (a gateway passes on its
// callers' names). The histogram's buckets are stats.Bounds; a sample equal to a bound counts in
// the next bucket (TARS's rule), which Prometheus's "le" does not distinguish at the resolution
// of a clock. A label value that is not valid UTF-8 (a function name a caller
// passed on) is mended, U+FFFD for each run of bad bytes, and keys mended alike are one series (their
// calls counted together; of two endpoint rows the first is kept). The
// counters of an endpoint go on across its leaving and coming back while its call counts are
// kept (communicator.WithStatsRetention); once they are dropped, a series that comes back starts
// again from 0, which Prometheus reads as a restart. Two collectors in one registry (two
// Communicators, or a client's and a server's of one Side) must be told apart by
// Options.ConstLabels, e.g. {"communicator": "orders"}: the registry refuses the second otherwise.
//
// NewLimitsCollector exposes a server's limits (package server, "# Limits"): counters over
// Server.LimitStats of the connections they refused or closed and the requests they received into
// a growing buffer or did not run:
//
//	reg.MustRegister(tarsprom.NewLimitsCollector(srv.LimitStats, tarsprom.Options{}))
//
//	tarscomm_server_connections_refused_total                             counter, beyond WithMaxConns
//	tarscomm_server_connections_closed_total{reason}                      counter, by a limit
//	tarscomm_server_requests_grown_total                                  counter, beyond WithFrameBudget
//	tarscomm_server_queue_timeouts_total                                  counter, not run (WithQueueTimeout)
//	tarscomm_server_queue_full_total                                      counter, refused (-9): queue full
//
// reason is idle (WithIdleTimeout), slow (WithBacklog's rule: a client that does not read its
// replies) or backlog (WithMaxBacklog's cap on unsent replies). Every series is sent at each
// scrape, zero or not. The subsystem is always "server" (Options.Side is ignored); the collector
// can share a registry with NewCollector(srv.Stats, Options{Side: "server"}).
package tarsprom
