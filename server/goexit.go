package server

import (
	"syscall"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
)

// A handler that ends its goroutine with runtime.Goexit (t.FailNow in a test's handler, for
// one) cannot be kept from ending it: recover does not stop a Goexit. The server answers the
// request RetUnknown (goexitDesc), as it answers a panic, and limits the damage:
//
//   - With workers (WithWorkers), the goroutine is a worker's: its own deferred call answers the
//     request and starts a new worker in its place (work). Nothing else is lost.
//   - Inline, the goroutine is the event loop's, which gnet cannot run again. The deferred call
//     below answers the request, shuts the loop's connections down (their clients see the close
//     at once and reconnect, instead of waiting for replies that never come), and marks the loop
//     lost, so that Stop does not wait for it; the server logs an error. Connections gnet hands
//     to the lost loop later are not served: handlers that may end their goroutine need workers.

// invokeInline runs the inline handler h of the request in l.req on the loop goroutine, from the
// connection cs (nil for a datagram, answered on c).
func (l *loop) invokeInline(c gnet.Conn, cs *conn, h HandlerFunc, cur *Current) (body []byte, ret int32, desc string) {
	returned := false
	defer func() {
		if !returned {
			l.lose(c, cs)
		}
	}()
	body, ret, desc = l.s.invoke(&l.ctxs, h, cur, l.req.Buffer, l.rsp.buf())
	returned = true
	return body, ret, desc
}

// lose runs on the loop goroutine as it ends (runtime.Goexit in an inline handler): see above.
func (l *loop) lose(c gnet.Conn, cs *conn) {
	l.lost.Store(true)
	req := &l.req
	if req.PacketType != codec.PacketOneway {
		if cs != nil {
			l.takePushes(cs)
			l.out.b = appendReply(l.out.b, &l.resp, req, codec.RetUnknown, goexitDesc, nil, nil)
			c = cs.c
		} else {
			l.out.b = appendDatagramReply(l.out.b[:0], &l.resp, req, codec.RetUnknown, goexitDesc, nil, nil, l.s.replyLimit())
		}
	}
	if c != nil && len(l.out.b) > 0 {
		_, _ = c.Write(l.out.b) // what the socket takes now: nobody writes the rest
	}
	shut := 0
	for _, x := range l.conns {
		if x.c == nil {
			continue
		}
		fd := -1
		switch c := x.c.(type) {
		case interface{ SockFd() int }: // TLS: the socket under the records
			fd = c.SockFd()
		case interface{ Fd() int }:
			fd = c.Fd()
		}
		if fd >= 0 && syscall.Shutdown(fd, syscall.SHUT_RDWR) == nil {
			shut++
		}
	}
	l.s.log.Error("an inline handler ended the event loop's goroutine (runtime.Goexit, t.FailNow): "+
		"the loop is lost, its connections are shut down, and connections given to it later are not served; "+
		"use server.WithWorkers for handlers that may end their goroutine",
		zap.String("servant", req.ServantName), zap.String("func", req.FuncName), zap.Int("conns", shut))
}
