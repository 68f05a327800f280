package server

import (
	"context"
	"sync"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// send writes out, complete replies, to cs through c (cs's gnet.Conn, or its TLS LoopConn),
// and reports whether it took out over: the caller must then forget it. Otherwise out's large
// bodies were given back (replies.release) and out.b is still the caller's. Replies of at least
// bigwrite.Min in all on a plain TCP connection with nothing queued in gnet are written directly,
// with one vectored write of their parts (out.b's bytes and the large bodies between them), and
// what the socket does not take is finished by a bigwrite.Writer from those buffers, instead of
// being copied into gnet's outbound buffer. While such a writer runs, replies wait in cs.held, in
// order: large ones are taken over, small ones copied. Loop goroutine only.
//
// It fails with errBacklog, leaving the closing of c to the caller, when the connection's unsent
// bytes exceed WithMaxBacklog (limits.go).
func (l *loop) send(cs *conn, c gnet.Conn, out *replies) (handed bool, err error) {
	if handed, err = l.write(cs, c, out); err == nil {
		err = l.checkBacklog(cs, c)
	}
	return handed, err
}

// write is send without the backlog's cap.
func (l *loop) write(cs *conn, c gnet.Conn, out *replies) (handed bool, err error) {
	size := out.size()
	if cs.big != nil {
		cs.lim.held += size
		if size >= bigwrite.Min || len(out.large) > 0 {
			cs.held = append(cs.held, *out) // take it over rather than copy it
			return true, nil
		}
		if n := len(cs.held); n > 0 && len(cs.held[n-1].large) == 0 && len(cs.held[n-1].b) < bigwrite.Min {
			cs.held[n-1].b = append(cs.held[n-1].b, out.b...)
		} else {
			cs.held = append(cs.held, replies{b: append([]byte(nil), out.b...)})
		}
		return false, nil
	}
	cs.lim.handed += int64(size)
	if size < bigwrite.Min && len(out.large) == 0 {
		_, err = c.Write(out.b) // the common case: small replies
		return false, err
	}
	iov := out.vec(l.iov[:0])
	defer func() {
		clear(iov)
		l.iov = iov[:0]
	}()
	if size >= bigwrite.Min && cs.tlsc == nil && c.OutboundBuffered() == 0 {
		if fd := c.Fd(); fd >= 0 {
			if n, ok := bigwrite.DirectVec(fd, iov); ok {
				if n == size {
					out.release()
					return false, nil
				}
				if w, err := bigwrite.StartVec(fd, iov, n); err == nil {
					l.startBig(cs, w, *out)
					return true, nil
				}
				iov = bigwrite.Skip(iov, n) // no descriptor to spare: gnet copies the rest
			}
		}
	}
	if len(iov) == 1 {
		_, err = c.Write(iov[0])
	} else {
		_, err = c.Writev(iov)
	}
	out.release()
	return false, err
}

// startBig runs w, which writes out, for cs. The writer's goroutine is counted in s.bigWriters
// (Stop waits for them) and reports back on the loop (bigDone), unless the engine is shutting
// down, when the connection is closing anyway.
func (l *loop) startBig(cs *conn, w *bigwrite.Writer, out replies) {
	cs.big = w
	s := l.s
	s.bigWriters.add()
	s.bigStarted.Add(1)
	go func() {
		defer s.bigWriters.done()
		err := w.Run(s.baseCtx)
		s.engineMu.RLock()
		defer s.engineMu.RUnlock()
		if s.engineDown || l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			l.bigDone(cs, w, out, err)
			return nil
		})) != nil {
			out.free()
		}
	}()
}

// bigDone runs on the loop when the writer w of cs, which wrote out, is done: the replies held
// behind it are written, or the connection closes if the write failed. A writer stopped with
// its connection (OnClose) has nothing left to do here.
func (l *loop) bigDone(cs *conn, w *bigwrite.Writer, out replies, err error) {
	if l.free.b == nil && cap(out.b) <= maxKeptBuffer {
		out.release()
		l.free = replies{b: out.b[:0], large: out.large} // the next replies handed over reuse them
	} else {
		out.free()
	}
	if cs.big != w || cs.c == nil {
		return
	}
	cs.big = nil
	if err != nil {
		_ = cs.c.Close()
		return
	}
	for len(cs.held) > 0 && cs.big == nil {
		next := cs.held[0]
		cs.held[0] = replies{}
		cs.held = cs.held[1:]
		cs.lim.held -= next.size()
		handed, err := l.send(cs, cs.c, &next)
		if !handed {
			bufpool.Put(next.b)
		}
		if err != nil {
			if cs.c != nil { // a failed write closed it already (OnClose); errBacklog did not
				_ = cs.c.Close()
			}
			return
		}
	}
	if len(cs.held) == 0 {
		cs.held = nil
	}
}

// running counts goroutines that may start while Stop waits for them to end (large-reply
// writers start on the loops whenever a handler answers): a sync.WaitGroup would need every Add
// from zero to happen before the Wait, which the race detector holds Stop to.
type running struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
}

func (r *running) add() {
	r.mu.Lock()
	if r.n++; r.n == 1 {
		r.idle = make(chan struct{})
	}
	r.mu.Unlock()
}

func (r *running) done() {
	r.mu.Lock()
	if r.n--; r.n == 0 {
		close(r.idle)
		r.idle = nil
	}
	r.mu.Unlock()
}

// wait returns once none is running, or with ctx's error when ctx ends first.
func (r *running) wait(ctx context.Context) error {
	for {
		r.mu.Lock()
		idle := r.idle
		r.mu.Unlock()
		if idle == nil {
			return nil
		}
		if err := wait(ctx, idle); err != nil {
			return err
		}
	}
}
