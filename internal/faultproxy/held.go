package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
)

// Held is a listening address whose connects hang until Release, and then succeed: a SYN that is
// not answered for a while, as from a server that is still starting or a path that drops packets
// for a time. Until Release its accept queue is full, as a Stalled address's, so the kernel drops
// SYNs; from Release on every connection is accepted and forwarded to the upstream address. A
// connect that was hanging completes at its next SYN retransmission (on Linux about 1s after it
// began, then 3s, 7s...), so a client's connect timeout must leave room for one.
type Held struct {
	upstream string
	st       *Stalled
	fillers  map[string]bool // local addresses of the connections that fill the queue

	mu     sync.Mutex
	ln     net.Listener          // guarded by mu; set by Release
	conns  map[net.Conn]struct{} // guarded by mu: both sides of every forwarded connection
	closed bool                  // guarded by mu

	accepts atomic.Int64
	wg      sync.WaitGroup
}

// ListenHeld returns a Held address on 127.0.0.1 that forwards to upstream (host:port) once
// released. Like ListenStalled it takes a few hundred milliseconds. Close releases everything.
func ListenHeld(upstream string) (*Held, error) {
	st, err := ListenStalled()
	if err != nil {
		return nil, err
	}
	h := &Held{upstream: upstream, st: st, fillers: make(map[string]bool), conns: make(map[net.Conn]struct{})}
	for _, c := range st.filler {
		h.fillers[c.LocalAddr().String()] = true
	}
	return h, nil
}

// Addr returns the address whose connects hang until Release, "127.0.0.1:port".
func (h *Held) Addr() string { return h.st.Addr() }

// Accepts returns how many client connections of this process were accepted since Release
// (another process's are reset at once, as by a Proxy).
func (h *Held) Accepts() int64 { return h.accepts.Load() }

// Release frees the accept queue and starts accepting and forwarding: hanging connects complete
// at their next SYN retransmission, new ones at once. Calling it again does nothing.
func (h *Held) Release() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return net.ErrClosed
	}
	if h.ln != nil {
		return nil
	}
	f := os.NewFile(uintptr(h.st.fd), "faultproxy-held")
	ln, err := net.FileListener(f) // a duplicate of the listening socket
	if err != nil {
		return fmt.Errorf("faultproxy: held listener: %w", err)
	}
	h.st.fd = -1
	_ = f.Close()
	h.st.Close() // the fillers go; their queued halves are accepted and dropped below
	h.ln = ln
	h.wg.Add(1)
	go h.serve(ln)
	return nil
}

func (h *Held) serve(ln net.Listener) {
	defer h.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if h.fillers[nc.RemoteAddr().String()] {
			_ = nc.Close()
			continue
		}
		if !FromThisProcess(nc.RemoteAddr().String(), nc.LocalAddr().String()) {
			reset(nc) // another process's client: not this test's traffic, not counted
			continue
		}
		h.accepts.Add(1)
		sc, err := net.DialTimeout("tcp", h.upstream, dialTimeout)
		if err != nil {
			reset(nc)
			continue
		}
		if !h.track(nc, sc) {
			return
		}
		h.wg.Add(2)
		go h.copy(sc, nc)
		go h.copy(nc, sc)
	}
}

// track records a forwarded pair; it reports false (closing both) once Close has begun.
func (h *Held) track(a, b net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		reset(a)
		reset(b)
		return false
	}
	h.conns[a], h.conns[b] = struct{}{}, struct{}{}
	return true
}

// copy forwards src to dst until either ends, then closes both.
func (h *Held) copy(dst, src net.Conn) {
	defer h.wg.Done()
	_, _ = io.Copy(dst, src)
	h.mu.Lock()
	delete(h.conns, dst)
	delete(h.conns, src)
	h.mu.Unlock()
	_ = dst.Close()
	_ = src.Close()
}

// Close stops listening, closes every forwarded connection and waits for the goroutines. Calling
// it again does nothing.
func (h *Held) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	if h.ln != nil {
		_ = h.ln.Close()
	}
	for c := range h.conns {
		_ = c.Close()
	}
	h.mu.Unlock()
	h.st.Close()
	h.wg.Wait()
}
