// Package tlsconn carries TLS connections (TARS "ssl" endpoints) for gnet event loops, which
// speak only plain sockets.
//
// # Design
//
// A TLS connection is handshaken off the loop with crypto/tls over an ordinary net.Conn, then
// bridged to the loop: Group.Bridge makes a Unix socket pair, hands one end to the caller to
// enroll with gnet like any TCP connection, and runs two goroutines on the other end, one
// moving the loop's bytes into the tls.Conn (encrypting) and one moving the tls.Conn's bytes
// to the loop (decrypting). The loop, the AdapterProxy on the client and the connection code of
// the server see a gnet.Conn as for plain TCP and run exactly the same code.
//
// The other design, a TLS state machine over the loop's own buffers, was rejected: crypto/tls
// needs a blocking net.Conn and offers no record-level API, so it would need either a TLS
// implementation of our own (a security liability) or a goroutine per connection anyway, plus a
// second implementation of every connection path (flush, frame assembly, close) behind an
// interface that plain TCP would pay for on every call. With the bridge:
//
//   - Plain TCP is unchanged: no interface, branch or allocation is added to its hot path
//     (AdapterProxy.Flush -> gnet.Conn.Write, OnTraffic -> inbound.Assembler.Next). Only the
//     dial (one branch on the endpoint's protocol) and OnClose (one map lookup while TLS
//     connections exist) know about TLS.
//   - Deadlines, exactly-once completion, retries and health stay where they are, in the
//     AdapterProxy and its timing wheel, so every rule of the fault suite holds on TLS
//     connections without a second implementation. The handshake runs within connect-timeout,
//     in the dial goroutine that already exists per connection attempt, and its failure is a
//     failed connect (DialFailed) with an error naming the endpoint and the cause.
//   - Backpressure still works: when the peer stops reading, the encrypting goroutine blocks in
//     tls.Conn.Write, the socket pair fills, and gnet's outbound buffer grows until
//     send-buffer-limit refuses calls. The bridge adds a bounded slack: the socket pair's kernel
//     buffers (1 MiB asked per end) and one 256 KiB buffer per direction.
//   - Close is total: gnet closing its end (Close, detach, protocol error, engine stop) is seen
//     by the encrypting goroutine as end of file; the owner also closes the Link in OnClose,
//     which closes the network connection and unblocks a goroutine stuck on a peer that does
//     not read. Group.Close closes every Link and waits for every goroutine: nothing leaks.
//   - Errors keep their cause: a TLS alert or record error that ends a bridged connection is
//     recorded in the Link before its socket is closed, so the owner reports "tls: ... bad
//     certificate" rather than gnet's "read: EOF". TLS failures match ErrTLS with errors.Is.
//
// The cost is two extra copies through the kernel per direction and batch (socket pair
// write and read), amortized over the batch of requests the loop writes at once, and two
// goroutines per TLS connection (never per call). Encryption runs on those goroutines, in
// parallel with the loop.
package tlsconn
