package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Accepting. A stream server (tcp, unix) accepts its connections itself, from a net.Listener on
// a goroutine of its own, and hands each to the event loops (gnet.Client.EnrollContext, which
// takes over the socket), instead of letting gnet's engine accept them: gnet's acceptor treats
// any accept error it does not retry as fatal and shuts the whole engine down, so a client that
// exhausts the process's file descriptors (EMFILE), or the system's (ENFILE), or its memory for
// sockets (ENOBUFS, ENOMEM), would close every connection and stop the server for good, while
// Stop still reported success. Here such an error only delays the next accept, as net/http does:
// the connections already open go on, and the server accepts again once descriptors are free.
// Datagram servers (udp) have nothing to accept and run on gnet's engine (gnet.Run).

// Accept backoff after an accept error: doubling from acceptBackoffMin up to acceptBackoffMax.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// listenStream opens the listener of protoAddr ("tcp://host:port", "tcp4://", "tcp6://",
// "unix:///path"). A socket file left at a unix path by a process that did not close its
// listener (nothing accepts on it: a connect is refused) is removed first; a socket a live
// server listens on is not, and the listen fails with EADDRINUSE, as a tcp port in use does;
// nor is any other file.
func listenStream(protoAddr string) (net.Listener, error) {
	network, address, _ := strings.Cut(protoAddr, "://")
	if network == "unix" {
		if fi, err := os.Lstat(address); err == nil && fi.Mode()&os.ModeSocket != 0 {
			c, err := net.DialTimeout("unix", address, time.Second)
			if err == nil {
				_ = c.Close()
				return nil, &net.OpError{Op: "listen", Net: network, Addr: &net.UnixAddr{Name: address, Net: network},
					Err: fmt.Errorf("a server is listening on the socket: %w", syscall.EADDRINUSE)}
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				_ = os.Remove(address)
			}
		}
	}
	return net.Listen(network, address)
}

// startStream starts a stream server's engine: its listener on protoAddr and a gnet client
// engine with ev and opts, whose Start runs OnBoot (which reports on ev.booted). The accept loop
// starts once Start has seen the boot through (acceptLoop).
func (s *Server) startStream(ev *events, protoAddr string, opts []gnet.Option) error {
	ln, err := listenStream(protoAddr)
	if err != nil {
		return err
	}
	cli, err := gnet.NewClient(ev, opts...)
	if err == nil {
		s.ln, s.cli = ln, cli
		s.acceptStop, s.acceptDone = make(chan struct{}), make(chan struct{})
		if err = cli.Start(); err != nil {
			s.ln, s.cli = nil, nil
		}
	}
	if err != nil {
		_ = ln.Close()
	}
	return err
}

// acceptLoop accepts connections until the listener closes (Stop) and enrolls each with cli's
// event loops, whose OnOpen admits or refuses it. An accept that fails (out of descriptors, of
// socket memory) is counted, logged at most once a second, and waited out. So is the descriptor
// an accepted connection's enrolling needs (gnet takes the socket over by duplicating it): the
// connection is held, not reset, and nothing more is accepted meanwhile, so the clients queued
// behind it wait instead of being accepted and reset one after the other.
//
// Enrolling waits for the chosen loop to register the connection, which a loop busy with a long
// inline handler delays: each connection is enrolled on a goroutine of its own, so that one busy
// loop holds up only the connections given to it, never the accepting.
func (s *Server) acceptLoop(ln net.Listener, cli *gnet.Client) {
	defer close(s.acceptDone)
	var p acceptPause
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || !s.pause(&p, err) {
				return
			}
			continue
		}
		if !s.admit(c.RemoteAddr()) {
			_ = c.Close()
			continue
		}
		for {
			if err = spareDescriptor(c); err == nil {
				break
			}
			if !s.pause(&p, fmt.Errorf("accepted connection waits for a descriptor: %w", err)) {
				_ = c.Close()
				s.unadmit()
				return
			}
		}
		p = acceptPause{lastLog: p.lastLog}
		s.enrolling.Go(func() {
			if _, err := cli.EnrollContext(c, admitted); err != nil { // closes c either way
				s.unadmit()
				s.lim.acceptFails.Add(1)
				if outOfDescriptors(err) { // a storm when it happens: once a second, as peerLine's
					s.peerLine(zapcore.WarnLevel, "not enrolled", "connection not enrolled", zap.Error(err))
				} else {
					s.log.Debug("connection not enrolled", zap.Error(err))
				}
			}
		})
	}
}

// acceptPause is the accept loop's backoff: the wait after the last failure, the failures in a
// row, and when one was last logged.
type acceptPause struct {
	delay   time.Duration
	fails   int
	lastLog time.Time
}

// pause counts and logs (at most once a second) the accept failure err and waits out the
// backoff; it reports false if Stop came meanwhile.
func (s *Server) pause(p *acceptPause, err error) bool {
	s.lim.acceptFails.Add(1)
	p.fails++
	p.delay = min(max(2*p.delay, acceptBackoffMin), acceptBackoffMax)
	if time.Since(p.lastLog) >= time.Second {
		p.lastLog = time.Now()
		s.log.Warn("accept failed, retrying", zap.Error(err), zap.Duration("retry_in", p.delay),
			zap.Int("consecutive", p.fails))
	}
	t := time.NewTimer(p.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.acceptStop:
		return false
	}
}

// spareDescriptor reports whether the process has a descriptor to spare for c's enrolling (gnet
// duplicates the socket): out of descriptors, the error (EMFILE, ENFILE); any other answer is
// left to the enrolling.
func spareDescriptor(c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var derr error
	_ = rc.Control(func(fd uintptr) {
		var nfd int
		if nfd, derr = syscall.Dup(int(fd)); derr == nil {
			_ = syscall.Close(nfd)
		}
	})
	if outOfDescriptors(derr) {
		return derr
	}
	return nil
}

// outOfDescriptors reports whether err says the process or the system ran out of descriptors or
// of memory for them.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// closeListener closes a stream server's listener, once; the accept loop ends on it. Stop calls
// it first of all, so that a client dialling the server while it stops is refused at once (and
// sends its calls elsewhere) rather than accepted and closed under the calls it wrote.
func (s *Server) closeListener() {
	s.lnOnce.Do(func() {
		close(s.acceptStop)
		_ = s.ln.Close()
	})
}

// admitted is the context of a connection the accept loop enrolls: admit counted it already.
var admitted any = &struct{ admitted bool }{true}

// stopAccepting closes the listener and waits for the accept loop and the enrolls it started to
// end: after it no Enroll runs, so the client engine may stop (an Enroll racing Client.Stop would
// hang).
func (s *Server) stopAccepting() {
	s.closeListener()
	<-s.acceptDone
	s.enrolling.Wait()
}
