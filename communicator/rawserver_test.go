package communicator_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

// rawServer is a plain TCP listener on loopback for the tests that need a peer the project's
// server cannot play (one that reads slowly, answers garbage or HTTP, or forwards): it serves
// each accepted connection on a goroutine of its own, and t.Cleanup closes the listener and
// every connection it tracked and waits for its goroutines. It serves only connections of this
// process: another process's client that dials its port is closed at once, and not counted.
type rawServer struct {
	ln      net.Listener
	accepts atomic.Int64 // connections of this process
	foreign atomic.Int64 // connections of another process, closed at once

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// serveRaw serves ln with a new rawServer: serve gets each accepted connection with its number
// (1 for the first). A connection stays open after serve returns unless serve closes it;
// Cleanup closes it.
func serveRaw(t testing.TB, ln net.Listener, serve func(n int64, c net.Conn)) *rawServer {
	t.Helper()
	s := new(rawServer)
	s.serve(t, ln, serve)
	return s
}

// serve starts serving ln with s, for a type that embeds a rawServer: its fields are set before
// the first connection is accepted, so serve may use them.
func (s *rawServer) serve(t testing.TB, ln net.Listener, serve func(n int64, c net.Conn)) {
	t.Helper()
	s.ln = ln
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !faultproxy.FromThisProcess(c.RemoteAddr().String(), c.LocalAddr().String()) {
				// A client of another process dialled a port it used before: not this test's.
				s.foreign.Add(1)
				_ = c.Close()
				continue
			}
			n := s.accepts.Add(1)
			s.track(c)
			s.wg.Go(func() { serve(n, c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// readRequests reads request frames of at most maxSize bytes (0: codec's default) from c and
// hands each, decoded, to h until h returns false or a read fails (the peer gone, or c closed).
// A frame that does not decode ends it too, and is the error returned.
func readRequests(c net.Conn, maxSize int, h func(req *codec.RequestPacket) bool) error {
	fr := codec.NewFrameReader(c, maxSize)
	for {
		frame, err := fr.Next()
		if err != nil {
			return nil
		}
		var req codec.RequestPacket
		if err := codec.DecodeRequest(frame, &req); err != nil {
			return err
		}
		if !h(&req) {
			return nil
		}
	}
}

// readDatagrams reads request datagrams from pc and hands each that decodes to h with its
// sender, until pc is closed; a datagram that does not decode is skipped.
func readDatagrams(pc net.PacketConn, h func(req *codec.RequestPacket, from net.Addr)) {
	buf := make([]byte, 1<<16) // the largest datagram
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var req codec.RequestPacket
		if codec.DecodeRequest(buf[:n], &req) == nil {
			h(&req, from)
		}
	}
}

// listenLoopback listens on a port of 127.0.0.1 the system picks.
func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// track makes Cleanup close c too (a connection the server opened itself, to an upstream).
func (s *rawServer) track(c net.Conn) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

// addr is the address the server listens on.
func (s *rawServer) addr() string { return s.ln.Addr().String() }

// listenSmallRcvBuf listens on a loopback port whose connections have a 64 KiB receive buffer:
// a client's socket to it fills after its own send buffer and this, not after the tens of
// megabytes a loopback receiver may take, so that large writes wait in the client.
func listenSmallRcvBuf(t testing.TB) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
