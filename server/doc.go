// Package server is a TARS server built on gnet event loops: a fast, real peer for examples,
// tests and benchmarks of tarscomm clients, speaking the wire protocol of TarsGo and TarsCpp
// servers (framing, RequestPacket/ResponsePacket, return codes, tars_ping).
//
// # What it owns
//
// A Server owns one gnet engine (WithNumEventLoop event loops, each one goroutine that owns its
// connections; a tcp or unix server's own accept loop hands them connections, accept.go),
// optionally a pool of worker goroutines (WithWorkers),
// and the handlers registered with Handle and HandleProto. Start starts them; Stop stops them
// and waits for all of them.
//
// # Which goroutine runs what
//
//   - The event loop that owns a connection reads it, splits the stream into frames (every
//     complete frame of a read is served; split frames wait for more bytes), decodes the
//     requests, answers what needs no handler (unknown servant -4, unknown function -3,
//     tars_ping), and writes replies. A frame length below 4 or one that is not TARS's, or an
//     undecodable packet, closes the connection. A request above WithMaxPacketSize is
//     answered RetServerDecode -1 naming the sizes (none if one-way) and skipped unread: the
//     connection goes on.
//   - Inline mode (WithWorkers(0), the default): the loop also runs the handlers, and writes
//     all the replies of one read with a single Write. This is the fastest mode; handlers must
//     not block, or they stall every connection of their loop.
//   - Worker mode (WithWorkers(n), n > 0): the loop copies the request body and queues the
//     request to n worker goroutines (a bounded queue, WithQueueCap; a full queue answers
//     RetOverload -9). A worker runs the handler and encodes the reply into its connection's
//     reply buffer; the loop is woken once per batch (EventLoop.Execute, coalesced) and
//     writes each connection's pending replies with one Write. Handlers may block or sleep.
//
// A reply body of 1 MiB or more that the handler appended to the rsp handed to it is written from
// there, not copied: the connection takes that buffer over until the body is written (the loop
// or worker hands the next handler another), and the frame's head and body go out with one
// vectored write; what the socket does not take at once is finished by a goroutine of its own
// (internal/bigwrite), and the connection's later replies wait behind it, in order.
//
// A handler's error answers with its code (interceptor.RetOf): an *Error gives its Code and
// Desc, another error with a TARSCode method its code and err.Error(), any other error
// RetUnknown -99 with err.Error(); a code 0 is answered -99 too; a panic is recovered, logged
// (with its stack, once a second at most per function, the line counting those it stands for),
// and answered with RetUnknown.
// A handler that ends its goroutine (runtime.Goexit, t.FailNow) is answered RetUnknown too;
// with workers a new worker takes the place of the one it ended, but inline it ends the event
// loop, whose connections are then shut down and which serves no more: handlers that may do so
// need WithWorkers (goexit.go).
// One-way requests (codec.PacketOneway) run their handler but get no reply. A reply whose frame
// would exceed WithMaxPacketSize is answered RetServerEncode -2 instead, saying so. Requests are
// served in TARS's version 1 only (protobuf services use it too): one of TUP (3, or 2, TarsJava's
// and TarsNode's older form), XML (4), JSON (5) or another version is answered RetServerDecode -1
// naming it, without a handler running (a TUP one with a TUP-shaped reply, its code in status
// STATUS_RESULT_CODE, as TarsCpp answers). An error reply always carries sResultDesc (tag 8),
// empty if the handler's error gave none: TarsJava's client requires it.
//
// A connection whose client shuts down its writing side (a half-close) is closed as soon as the
// loop reads the end of its stream: gnet knows no half-closed connection. Replies still being
// handled or written then are lost, as with TarsCpp's servers; TARS clients never half-close.
//
// # The handler's ctx
//
// A request that carries its client's timeout (iTimeout, Current.Timeout: TARS clients send it)
// is handled with a ctx whose deadline is that long after the loop read the request, as
// TarsGo's servers do: time spent waiting for a worker counts. A handler that calls on with it
// passes the deadline down: a tarscomm client sends no longer a timeout than what is left, so a
// chain of calls gives up when its first caller does, instead of working on for nobody. The ctx
// ends at that deadline, when the handler returns, or when Stop gives up waiting, as TarsGo's
// and gRPC's do. Its Deadline costs nothing; its timer is made the first time Done is asked for,
// which a tarscomm call made with it never does: such a call takes the deadline, and a sync one
// ends when Stop gives up, but neither watches the ctx otherwise, so an async call the handler
// starts goes on, to that deadline, after the handler returned. The same holds for a ctx made
// from it by adding values (a tracing span, a request id); one made with a cancel or deadline of
// its own is watched. Work that must outlive the deadline takes context.WithoutCancel(ctx) (a
// cancel added to that is watched too). A request without a timeout gets a ctx without a
// deadline, which ends when the handler returns or Stop gives up waiting.
//
// The ctx also carries on what TARS carries down a chain of calls: a dyed request's key
// (package dye), its cookies (status entries not named STATUS_..., package cookie) and a traced
// request's trace id (iMessageType 0x100 with STATUS_TRACE_KEY, package tracekey). The calls the
// handler makes with it are dyed, carry the cookies under their own entries, and carry the trace
// under a new span id each, as TarsCpp's servers do.
//
// The Current and the request body handed to a handler are valid only during the call.
//
// # UDP
//
// Start("udp://host:port") serves TARS over UDP, as TarsCpp servers do: each datagram is one
// request frame and each reply one datagram to the sender, with the same RequestPacket and
// ResponsePacket; handlers, inline or worker mode, return codes and Stop are as over TCP. There
// are no connections: WithTLS and WithAuth are refused, and gnet gives each event loop its own
// socket on the port (SO_REUSEPORT), so port 0 is served by one loop. A datagram that is not
// exactly one frame of at most internal/datagram.MaxSize (65507) bytes, or whose request does not
// decode, is dropped and counted (DroppedDatagrams), and serving goes on; a reply that would not
// fit a datagram is replaced by a RetServerEncode reply that says so.
//
// # Server push
//
// A handler may push packets the client did not ask for on the request's connection
// (Current.Push), now or later from any goroutine through the handle Current.Pusher returns: a
// ResponsePacket with request id 0 whose status TARS_FUNC names the function, as TarsCpp's
// Current::sendPushResponse sends it. It is written with the connection's replies; once the
// connection has closed, Push fails with ErrConnClosed. A tarscomm client hands it to the
// proxy's push callback (servantproxy.SetPushCallback).
//
// # Limits
//
// One client cannot exhaust the server; the rules are TarsCpp's TC_EpollServer's, plus a hard
// cap:
//
//   - WithMaxConns: a connection accepted beyond the limit is closed at once. Off by default.
//   - WithIdleTimeout: a connection on which no byte moved for the timeout, either way (no bytes
//     received, no reply bytes sent), with no handler running for it and no TLS handshake (which
//     WithHandshakeTimeout bounds), is closed: replies waiting for a client that reads none of
//     them do not keep it open, pushes it reads do. A connection whose handler runs is never
//     cut. Off by default.
//   - WithBacklog, TarsCpp's rule against clients that do not read their replies: a connection
//     whose unsent reply bytes (everything the server holds for it: gnet's outbound buffer, the
//     large-reply writer's rest and the replies held behind it, worker replies the loop has not
//     written yet) stay above the limit, and that sends at most the minimum in each of 3
//     windows of 5 s in a row (what the client took: bytes that left the socket's send queue,
//     on Linux), is closed and logged at warn level with what it sent. On by
//     default with TarsCpp's defaults: 100 MiB and 1024 bytes.
//   - WithMaxBacklog: a connection whose unsent reply bytes pass the cap (256 MiB by default) is
//     closed at once, before the replies of a read take more memory: a flood of requests for
//     large replies cannot run the server out of memory in the 15 s the rule above takes.
//   - WithQueueTimeout (worker mode): a request that waited for a worker longer than the queue
//     timeout (10 s by default, TarsCpp's queuetimeout) or than its client's own timeout is
//     answered -6 (server queue timeout) without running: under overload the workers serve
//     requests someone still waits for. A one-way request is dropped.
//   - WithQueueBytes (worker mode): the bytes of the request frames handed to the workers and
//     not finished yet (256 MiB by default); a request that would pass them is answered -9 at
//     once, unless nothing else is queued.
//   - WithFrameBudget: the bytes that incomplete large requests (64 KiB and over) of all
//     connections reserve ahead of their arrival (256 MiB by default). Within it a request
//     whose header has arrived is received into a buffer of its whole length, the fast path;
//     beyond it a request is received into a buffer that grows with the bytes that actually
//     arrive, so headers that claim the maximum packet size and stall, on many connections,
//     pin 64 KiB each, not the length they claim. Nothing is refused or closed: such requests
//     are counted (LimitStats.Grown).
//
// Refusals, closes, grown and timed-out requests are counted (LimitStats; module prometheus's
// tarsprom.NewLimitsCollector exports them); refusals and idle closes are logged at debug level,
// the backlog rules at warn. The idle and slow-reader rules are checked on each connection's own
// event loop, by a sweep every second or less (gnet's ticker queues it on every loop) that runs
// only when one of them is on; on the per-request path the limits cost a flag store and a byte
// count per read, and an atomic add or two per large request that arrives over several reads (the
// frame budget). UDP has no connections: the limits do not apply.
//
// # Stopping
//
// Stop closes the listener (a stream server's: a client dialling it is refused; a datagram
// server's socket stays open until the end), sends a notice on every connection whose requests
// were all TARS's (a one-way -9 with codec.StoppingDesc for request id -1: a tarscomm client
// takes the endpoint out of rotation, TarsGo's and TarsCpp's drop it; none on a connection that
// spoke TUP, or has sent nothing, as TarsNode's TUP client could not read it) and refuses new requests, tars_ping included
// (answered with RetOverload -9 and codec.StoppingDesc, "server is stopping": they did not run,
// and a tarscomm client sends them to another endpoint), waits for the handlers in flight and
// the writing of their replies, closes the connections, and waits for every goroutine it
// started: the gnet loops and the workers. gnet.Run blocks, so Start runs it on a goroutine
// that Stop waits for. A Stop whose ctx ends first refuses the requests still queued for a
// worker the same way (they did not run, and move elsewhere), waits up to 100 ms for those
// answers to be written, then closes the connections under the handlers still running.
//
// # Example
//
// From code (package server/serverconf builds servers from the [server] table of a TOML file
// instead):
//
//	s := server.New(server.WithWorkers(0)) // inline: echo never blocks
//	err := s.Handle("Test.EchoServer.EchoObj", "Echo",
//		func(ctx context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
//			return append(rsp, req...), nil
//		})
//	addr, err := s.Start("127.0.0.1:0")
//	// ... clients call Test.EchoServer.EchoObj@tcp -h 127.0.0.1 -p <addr's port>
//	err = s.Stop(ctx)
package server
