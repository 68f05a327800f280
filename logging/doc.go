// Package logging holds what tarscomm's packages share about logging: the logger a Communicator
// or Server uses when given none, a bridge from log/slog, and the one set of keys log lines use.
//
// # Quiet by default
//
// The library logs nothing until something is wrong. Given no logger, a Communicator (and a
// Server) logs JSON lines to standard error from the warn level up (Default): a failed connect,
// a lost connection, a registry that does not answer, a callback or handler that panicked.
// Nothing is logged per call above Debug. The TOML key log-level lowers or raises that level
// (debug, info, warn, error; default warn). A logger given in code (communicator.WithLogger,
// communicator.WithSlog, server.WithLogger) replaces the default and its level rules; a
// zap.NewNop() silences the library entirely.
//
// Warn rather than a nop logger: a connect that keeps failing, a registry that no longer
// answers or a handler that panicked must reach someone who never thought of configuring a
// logger (grpc-go, likewise, prints its errors unless told otherwise); what is routine (a
// connection made, a list installed) stays at Info and Debug.
//
// # log/slog
//
// The packages log through a *zap.Logger. FromSlog turns a *slog.Logger into one: each entry
// the slog handler enables becomes one slog record (the logger's name under the key "logger",
// the fields as attributes, in order). Whether a level is logged is the handler's Enabled, asked
// before any field is converted, so a disabled Debug line costs what it costs with zap.
//
//	comm, err := communicator.New(cfg, communicator.WithSlog(slog.Default()))
//	srv := server.New(server.WithLogger(logging.FromSlog(slog.Default())))
//
// # Keys
//
// Log lines name things with one set of keys, in snake_case (the keys test of this package
// reads every zap field of the repository and fails on any other):
//
//	servant      the servant (object) name, e.g. Hello.Server.GreeterObj — never obj or object
//	func         the function called
//	endpoint     an endpoint or address the library dials or listens on
//	remote       the peer of a server connection
//	netthread    the index of a Communicator's net thread
//	error        the error (zap.Error)
//	consecutive  how many times in a row it failed
//	retry_in     the wait before the next attempt
//	active       how many endpoints a list holds
//	path, key, value, host, port, istcp, state, loops, workers, since_read, since_ping,
//	since_moved, panic, stack, ttl, ret (a TARS return code), bytes (a size), sent (bytes
//	sent), conns (a count of connections), calls (a count of calls), request_id (a packet's
//	iRequestId), limit (the configured bound a value exceeds), suppressed (how many lines of
//	its kind a rate-limited line stands for besides itself): what their names say,
//	where one subsystem needs them
//
// Loggers are named after the subsystem: tarscomm (the Communicator's default), registry,
// naming-file, asyncproc, server, gnet, devregistry; in the etcd module, etcd-naming and
// etcd-client.
package logging
