package server

import (
	"context"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// send writes out, complete replies, to cs through c (cs's gnet.Conn, or its TLS LoopConn),
// and reports whether it took out over: the caller must then forget the buffer. A buffer of at
// least bigwrite.Min on a plain TCP connection with nothing queued in gnet is written directly,
// and what the socket does not take is finished by a bigwrite.Writer from its own buffer,
// instead of being copied into gnet's outbound buffer. While such a writer runs, replies wait in
// cs.held, in order: large buffers are taken over, small ones copied. Loop goroutine only.
func (l *loop) send(cs *conn, c gnet.Conn, out []byte) (handed bool, err error) {
	if cs.big != nil {
		if len(out) >= bigwrite.Min {
			cs.held = append(cs.held, out) // take it over rather than copy it
			return true, nil
		}
		if n := len(cs.held); n > 0 && len(cs.held[n-1]) < bigwrite.Min {
			cs.held[n-1] = append(cs.held[n-1], out...)
		} else {
			cs.held = append(cs.held, append([]byte(nil), out...))
		}
		return false, nil
	}
	if len(out) >= bigwrite.Min && cs.tlsc == nil && c.OutboundBuffered() == 0 {
		if fd := c.Fd(); fd >= 0 {
			if n, ok := bigwrite.Direct(fd, out); ok {
				if n == len(out) {
					return false, nil
				}
				if w, err := bigwrite.Start(fd, out, n); err == nil {
					l.startBig(cs, w)
					return true, nil
				}
				out = out[n:] // no descriptor to spare: gnet copies the rest
			}
		}
	}
	_, err = c.Write(out)
	return false, err
}

// startBig runs w for cs. The writer's goroutine is counted in s.bigWriters (Stop waits for
// them) and reports back on the loop (bigDone), unless the engine is shutting down, when the
// connection is closing anyway.
func (l *loop) startBig(cs *conn, w *bigwrite.Writer) {
	cs.big = w
	s := l.s
	s.bigWriters.Add(1)
	s.bigStarted.Add(1)
	go func() {
		defer s.bigWriters.Done()
		err := w.Run(s.baseCtx)
		s.engineMu.RLock()
		defer s.engineMu.RUnlock()
		if s.engineDown || l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			l.bigDone(cs, w, err)
			return nil
		})) != nil {
			bufpool.Put(w.Buf())
		}
	}()
}

// bigDone runs on the loop when the writer w of cs is done: the replies held behind it are
// written, or the connection closes if the write failed. A writer stopped with its connection
// (OnClose) has nothing left to do here.
func (l *loop) bigDone(cs *conn, w *bigwrite.Writer, err error) {
	bufpool.Put(w.Buf())
	if cs.big != w || cs.c == nil {
		return
	}
	cs.big = nil
	if err != nil {
		_ = cs.c.Close()
		return
	}
	for len(cs.held) > 0 && cs.big == nil {
		out := cs.held[0]
		cs.held[0] = nil
		cs.held = cs.held[1:]
		handed, err := l.send(cs, cs.c, out)
		if !handed {
			bufpool.Put(out)
		}
		if err != nil {
			_ = cs.c.Close()
			return
		}
	}
	if len(cs.held) == 0 {
		cs.held = nil
	}
}
