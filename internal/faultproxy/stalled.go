package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Stalled is a listening address whose connects hang: its accept queue is full and nobody
// accepts, so the kernel drops new SYNs and a client's connect waits until its own timeout. It is
// how a host that silently drops packets (a firewall, a dead machine) looks to a client.
type Stalled struct {
	addr   string
	fd     int
	filler []net.Conn // the connections that fill the accept queue
}

// ListenStalled returns a Stalled address on 127.0.0.1. It takes a few hundred milliseconds: it
// fills the accept queue and checks that one more connect hangs. Close releases it.
func ListenStalled() (*Stalled, error) {
	fd, err := socket()
	if err != nil {
		return nil, fmt.Errorf("faultproxy: stalled socket: %w", err)
	}
	s := &Stalled{fd: fd}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		s.Close()
		return nil, fmt.Errorf("faultproxy: stalled bind: %w", err)
	}
	// A backlog of 0 holds one connection in the accept queue; the next SYN is dropped.
	if err := syscall.Listen(fd, 0); err != nil {
		s.Close()
		return nil, fmt.Errorf("faultproxy: stalled listen: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("faultproxy: stalled getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		s.Close()
		return nil, errors.New("faultproxy: stalled socket is not IPv4")
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", in4.Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
		if err != nil {
			return s, nil // the queue is full: connects hang now
		}
		s.filler = append(s.filler, c)
	}
	s.Close()
	return nil, errors.New("faultproxy: could not fill the accept queue of a stalled listener")
}

// Addr returns the address whose connects hang, "127.0.0.1:port".
func (s *Stalled) Addr() string { return s.addr }

// HostPort returns Addr's host and port.
func (s *Stalled) HostPort() (host, port string) {
	host, port, _ = net.SplitHostPort(s.addr)
	return host, port
}

// Close closes the listening socket and the connections that filled it.
func (s *Stalled) Close() {
	for _, c := range s.filler {
		_ = c.Close()
	}
	s.filler = nil
	if s.fd >= 0 {
		_ = syscall.Close(s.fd)
		s.fd = -1
	}
}
