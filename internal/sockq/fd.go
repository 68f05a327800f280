package sockq

// Fd returns the socket of c (a gnet.Conn, or a TLS connection over one) whose queues Unsent and
// Unread read, -1 without one: a TLS connection's is the socket under its records (its SockFd:
// its Fd is -1, as no one may write it directly), whose counts are of ciphertext, a little more
// than the plaintext handed; a sample then sees progress later, never sooner.
func Fd(c any) int {
	if s, ok := c.(interface{ SockFd() int }); ok {
		return s.SockFd()
	}
	if f, ok := c.(interface{ Fd() int }); ok {
		return f.Fd()
	}
	return -1
}
