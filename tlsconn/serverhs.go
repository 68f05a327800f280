package tlsconn

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// ServerHandshake is the server side of a TLS connection the loop accepted. The handshake runs
// on a goroutine of its own, over bytes the loop hands it (Feed) and writes it makes with
// the loop writes for it; once it is over, the session runs on the loop as a LoopConn, like a
// client's. Feed and Close must be called on the loop goroutine.
type ServerHandshake struct {
	c    gnet.Conn
	sc   *switchConn
	tc   *tls.Conn
	addr string

	// Guarded by sc.mu.
	state int // hsRunning, hsDone or hsFailed
	err   error
}

// Handshake states.
const (
	hsRunning = iota
	hsDone
	hsFailed
)

// StartServer starts the handshake of c, the loop's new connection, with cfg, within limit or
// until stop ends. wg counts the goroutine. When the handshake fails, the goroutine calls
// failed with the *Error (say, to log it). Either way it then wakes c, so that the loop's next
// Feed writes the handshake's last records (or its alert) and returns the LoopConn (or the
// error, to close c) even if the client sends nothing more. Every call
// the goroutine makes on c (Wake, to have the loop write its records; Close) runs inside guard, which must skip it once
// the engine's loops are shutting down (gnet would write to a closed poller).
func StartServer(stop context.Context, c gnet.Conn, cfg *tls.Config, limit time.Duration, wg *sync.WaitGroup, guard func(func()), failed func(error)) *ServerHandshake {
	sc := &switchConn{gc: c, guard: guard}
	sc.fed.L = &sc.mu
	h := &ServerHandshake{c: c, sc: sc, tc: tls.Server(sc, cfg), addr: c.RemoteAddr().String()}
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(stop, limit)
		defer cancel()
		err := h.tc.HandshakeContext(ctx)
		sc.mu.Lock()
		if err == nil && !sc.closed {
			sc.mem = true // from now on only the loop touches sc
			h.state = hsDone
		} else {
			if err == nil {
				err = context.Canceled
			}
			h.state, h.err = hsFailed, handshakeError(h.addr, err, limit)
		}
		sc.mu.Unlock()
		if h.state == hsFailed {
			failed(h.err)
		}
		// The loop's Feed writes what the handshake left (its last records, or an alert) and
		// takes the connection over, or closes it.
		guard(func() { _ = c.Wake(nil) })
	}()
	return h
}

// Feed hands the loop's bytes of the connection to the handshake and writes the records the
// handshake made. It returns the LoopConn once the handshake is over (the bytes read meanwhile
// are its first input: call Pump next), an error if it failed (close the connection), or
// neither while it runs.
func (h *ServerHandshake) Feed() (*LoopConn, error) {
	sc := h.sc
	sc.mu.Lock()
	state, err := h.state, h.err
	if state == hsRunning {
		if n := h.c.InboundBuffered(); n > 0 {
			b, _ := h.c.Next(n)
			sc.in = append(sc.in, b...)
			sc.fed.Signal()
		}
	}
	out := sc.hsOut
	sc.hsOut = nil
	sc.mu.Unlock()
	if len(out) > 0 {
		// The handshake's records (or its alert, if it failed), before anything the loop writes
		// once it is over.
		if _, werr := h.c.Write(out); werr != nil && state != hsFailed {
			return nil, werr
		}
	}
	switch state {
	case hsRunning:
		return nil, nil
	case hsFailed:
		return nil, err
	}
	return &LoopConn{Conn: h.c, s: &Session{tc: h.tc, sc: sc, addr: h.addr}}, nil
}

// Close ends a handshake in progress: the loop's connection closed.
func (h *ServerHandshake) Close() {
	h.sc.mu.Lock()
	h.sc.closed = true
	h.sc.fed.Broadcast()
	h.sc.mu.Unlock()
}
