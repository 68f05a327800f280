// Package inbound cuts TARS frames out of a gnet connection's inbound bytes at a cost linear in
// their size, for the client's connections (adapterproxy) and the server's alike.
//
// gnet calls OnTraffic once per read() with what that read returned; whatever the handler leaves
// unconsumed is copied into the connection's ring buffer, and a later Peek of more than the last
// read returned copies the ring buffer out again. A frame of n bytes that arrives over k reads
// and is peeked whole on every read costs O(k·n) copying — O(n²) for a large reply trickling in
// — and holds the event loop while it does, so every other call on the net thread waits.
//
// An Assembler moves an incomplete frame out of gnet as soon as its 4-byte header is seen, into a
// buffer of exactly the frame's length, and appends each later read to it: every byte is copied
// once, from gnet's read buffer into the frame's final buffer, and gnet's ring buffer stays
// empty. Each OnTraffic then costs what that one read returned, however large the frame.
// Frames that are complete in gnet's buffer are returned as views into it, without any copy.
//
// Large frames (bufpool.MinSize and over) are assembled in buffers from bufpool and handed to
// the caller, who owns them: a client hands the reply's body to the user without another copy,
// or gives the buffer back to the pool once the body is decoded. Smaller incomplete frames are
// assembled in a buffer the Assembler keeps and reuses. The rest of a large frame is read
// straight from the socket into its buffer when the connection has one (plain TCP); a TLS
// connection (tlsconn.LoopConn) is handed that part of the buffer instead, and decrypts into it.
//
// Taking a buffer of the whole length when only the header has arrived lets a peer that claims
// the maximum packet size and sends nothing more pin that much memory per connection. A server
// therefore gives all its connections' Assemblers one Budget: the bytes their incomplete large
// frames may reserve together. A frame the budget can take is assembled as above, its length
// reserved until it is handed over or dropped; a frame it cannot take is not refused but
// assembled in a buffer that starts at what has arrived (at least bufpool.MinSize) and grows,
// at least doubling, only when bytes that do not fit are in hand, never beyond the frame's
// length: memory follows what the peer sent, at the cost of copying a growing frame's bytes
// again at each doubling. Direct reads and a TLS connection's filling only ever fill the free
// part of the current buffer; bytes beyond it wait in the socket (or the TLS connection's
// buffer) for the next read, which shows that the buffer must grow. Either way the frame handed
// over is exactly its length, from bufpool. Without a Budget (the client's connections, whose
// peer is a server they chose) every incomplete large frame takes its whole length at once.
//
// A frame longer than the Assembler's Max is not read: once its first HeadLen bytes are there,
// Next reports it as an *Oversized holding them, and then discards its bytes as they arrive,
// taking no memory for them, and goes on with the next frame. The caller reads the request's or
// reply's ids from the head and answers (a server: -1 naming the sizes) or fails (a client:
// ErrDecode) that one call, and the connection and its other calls go on. A length that is
// another protocol's bytes (HTTP, TLS, text), or beyond MaxSkip, is an error that closes the
// connection, as is a head that does not read as TARS.
//
// An Assembler belongs to one connection and is used on its event loop goroutine only.
package inbound
