// Package tlsconn carries TLS connections (TARS "ssl" endpoints) for gnet event loops, which
// speak only plain sockets.
//
// # Client: TLS records on the loop
//
// The net thread's dial goroutine, which exists anyway per connection attempt, connects and runs
// the handshake with crypto/tls on the connection itself, within connect-timeout (and TARS
// authentication after it, for -e 1 endpoints). Its failure is a failed connect (DialFailed),
// with an *Error naming the endpoint and the cause. The Session is then detached: crypto/tls is
// left writing to and reading from memory buffers, and the connection is enrolled with the loop
// like a TCP one. On the loop a LoopConn, a gnet.Conn whose Write encrypts and whose Peek, Read
// and Discard return what Pump decrypted, is what the AdapterProxy holds: it runs exactly the
// code it runs on TCP, with no goroutine, no lock and no extra copy through the kernel.
//
// Reading an empty buffer fails at once with a temporary net.Error, which crypto/tls does not
// keep: it returns to the loop holding the partial record, and resumes on the next OnTraffic.
//
// Pump decrypts into a plaintext buffer that Peek and Next return views of, except for the rest
// of a large frame that the reader is assembling (package inbound): the reader hands that part
// of the frame's buffer over (Fill), and Pump decrypts its bytes straight into it, rather than
// into the plaintext buffer to be copied again. Each record written is encrypted into a
// buffer that gnet writes with one call per Write or Writev: one write(2), not one per record.
//
// # Server: the handshake on a goroutine, then the loop
//
// A server's handshake cannot run on the loop (crypto/tls blocks until it completes, and keeps
// any error of it). StartServer runs it on a goroutine of its own per new connection, over the
// bytes the loop hands it (ServerHandshake.Feed, from OnTraffic), within the handshake timeout;
// the loop writes its records too, so that they go out before any the loop writes afterwards. Once it is over the session runs on the loop as a
// LoopConn, exactly as a client's: the goroutine has exited, and the server reads and writes the
// connection through the LoopConn with the code it runs on TCP. A failed or stalled handshake
// closes the connection; no handler ever sees it.
//
// # Why not the other way
//
// A TLS state machine of our own over the loop's buffers would be a second TLS implementation
// to trust. A goroutine pair per connection relaying between crypto/tls on the socket and a
// socket pair enrolled with gnet (the first version of this package) works with gnet as it is,
// but costs two copies through the kernel and two wakeups per batch and direction: it measured
// at 48-60% of plain TCP's QPS at 128 B, where records on the loop measure at 70-94%. With the
// design above:
//
//   - Plain TCP is unchanged: no interface, branch or allocation is added to its hot path
//     (AdapterProxy.Flush -> gnet.Conn.Write, OnTraffic -> inbound.Assembler.Next); a TLS
//     connection is told apart by the type of its gnet context, which the callbacks switch on
//     already.
//   - Deadlines, exactly-once completion, retries, health and keepalive stay in the
//     AdapterProxy and its timing wheel, so every rule of the fault suite holds on TLS
//     connections without a second implementation.
//   - Backpressure is the same: OutboundBuffered counts the encrypted bytes gnet could not
//     write, against send-buffer-limit.
//   - Close is the same: the connection is the loop's; closing it ends the session, and ends a
//     server handshake in progress (Stop waits for those goroutines).
//   - TLS failures match ErrTLS with errors.Is; an alert that ends an established connection
//     (how TLS 1.3 reports a refused client certificate) is the cause its calls fail with.
package tlsconn
