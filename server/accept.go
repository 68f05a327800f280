package server

import (
	"errors"
	"net"
	"os"
	"strings"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"
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
// "unix:///path"). A socket file left at a unix path (by a process that did not close its
// listener) is removed first; any other file there is not, and the listen fails.
func listenStream(protoAddr string) (net.Listener, error) {
	network, address, _ := strings.Cut(protoAddr, "://")
	if network == "unix" {
		if fi, err := os.Lstat(address); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(address)
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
// socket memory) is counted, logged at most once a second, and waited out.
//
// Enrolling waits for the chosen loop to register the connection, which a loop busy with a long
// inline handler delays: each connection is enrolled on a goroutine of its own, so that one busy
// loop holds up only the connections given to it, never the accepting.
func (s *Server) acceptLoop(ln net.Listener, cli *gnet.Client) {
	defer close(s.acceptDone)
	var (
		delay   time.Duration
		fails   int // in a row
		lastLog time.Time
	)
	for {
		c, err := ln.Accept()
		if err == nil {
			delay, fails = 0, 0
			if !s.admit(c.RemoteAddr()) {
				_ = c.Close()
				continue
			}
			s.enrolling.Go(func() {
				if _, err := cli.EnrollContext(c, admitted); err != nil { // closes c either way
					s.unadmit()
					s.lim.acceptFails.Add(1)
					s.log.Debug("connection not enrolled", zap.Error(err))
				}
			})
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
		s.lim.acceptFails.Add(1)
		fails++
		delay = min(max(2*delay, acceptBackoffMin), acceptBackoffMax)
		if time.Since(lastLog) >= time.Second {
			lastLog = time.Now()
			s.log.Warn("accept failed, retrying", zap.Error(err), zap.Duration("retry_in", delay),
				zap.Int("consecutive", fails))
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.acceptStop:
			t.Stop()
			return
		}
	}
}

// admitted is the context of a connection the accept loop enrolls: admit counted it already.
var admitted any = &struct{ admitted bool }{true}

// stopAccepting closes the listener and waits for the accept loop and the enrolls it started to
// end: after it no Enroll runs, so the client engine may stop (an Enroll racing Client.Stop would
// hang).
func (s *Server) stopAccepting() {
	close(s.acceptStop)
	_ = s.ln.Close()
	<-s.acceptDone
	s.enrolling.Wait()
}
