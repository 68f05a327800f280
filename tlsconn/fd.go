package tlsconn

// Fd returns -1: a LoopConn's socket carries TLS records, not the plaintext its user reads and
// writes, so no one may read or write it directly. (internal/inbound and adapterproxy read and
// write large frames straight from a connection's socket when its Fd is not negative.)
func (c *LoopConn) Fd() int { return -1 }

// SockFd returns the socket under the TLS records, for what reads and writes no data: a
// shutdown, the kernel's counts of bytes queued either way (adapterproxy's keepalive samples
// them). Never read or write it.
func (c *LoopConn) SockFd() int { return c.Conn.Fd() }
