// Package bigwrite finishes large writes to a non-blocking socket off the event loop.
//
// A gnet connection that is handed a buffer of megabytes writes what the socket takes at once
// and copies the rest into its outbound buffer, which it allocates (and clears) for the purpose;
// at megabytes per call that copy is a fifth of the work of the side that writes. Instead, the
// event loop writes such a buffer itself with [Direct]; if the socket takes only part, a
// [Writer] takes the buffer over and writes the rest from a goroutine of its own, on a
// duplicate of the socket, waiting for it to become writable between writes. The loop writes
// nothing else on that connection until the writer is done (it keeps later bytes in order
// behind it), and stops the writer with [Writer.Stop] when the connection closes. A frame whose
// parts are in several buffers (a header and a body written where it was made) is written the
// same way with one vectored write, [DirectVec] and [StartVec], instead of being copied into one.
//
// The client's connections (adapterproxy) and the server's (server) both use it.
package bigwrite
