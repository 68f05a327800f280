package communicator_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// A connection the client moves off is reported closed to the push callback at once
// ("pushes on it are gone: subscribe again"), though the client still reads it for the replies
// of the calls written on it. What the server pushes on it then is dropped and counted, not
// delivered after its OnClose, where the subscriber, which subscribed again on the new
// connection, would take it for a push of the new subscription. Before, it was delivered (a
// review of server push: both tests below failed 3 of 3).

// pushEvents records, in the order the callback saw them, every event of a PushCallback.
type pushEvents struct {
	mu     sync.Mutex
	events []string // "connect", "close", "push <func> <body>"
}

func (l *pushEvents) add(s string) {
	l.mu.Lock()
	l.events = append(l.events, s)
	l.mu.Unlock()
}

func (l *pushEvents) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, "|")
}

func (l *pushEvents) count(e string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.events {
		if x == e {
			n++
		}
	}
	return n
}

func (l *pushEvents) callback() *servantproxy.PushCallback {
	return &servantproxy.PushCallback{
		OnPush:    func(p *servantproxy.Push) { l.add("push " + p.Func + " " + string(p.Body)) },
		OnConnect: func(string) { l.add("connect") },
		OnClose:   func(string, error) { l.add("close") },
	}
}

// A TarsGo server restarting gracefully sends _reconnect_; the old process still pushes on
// that connection before it closes it.
func TestPushOnConnectionAskedToLeaveDropped(t *testing.T) {
	endToEnd(t)
	ln := listenLoopback(t)
	pushNow := make(chan struct{})
	serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer c.Close()
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			out := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: codec.PushRequestID, ResultDesc: codec.ReconnectDesc})
			if _, err := c.Write(out); err != nil {
				return false
			}
			select {
			case <-pushNow:
			case <-time.After(live):
				return false
			}
			out = hsPushFrame([]byte("late"))
			out = codec.AppendResponse(out, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: req.RequestID, Buffer: []byte("subscribed")})
			_, _ = c.Write(out)
			time.Sleep(time.Second) // the old process closes the connection later
			return false
		})
	})
	comm := newComm(t, func(c *conf.Config) { onePushThread(c); livenessTimeouts(c) })
	sp := pushProxy(t, comm, ln.Addr().String())
	log := &pushEvents{}
	sp.SetPushCallback(log.callback())
	done := make(chan error, 1)
	go func() {
		body, err := sp.InvokeRaw(testCtx(t), "Subscribe", nil)
		if err == nil && string(body) != "subscribed" {
			err = errors.New("reply " + string(body))
		}
		done <- err
	}()
	waitFor(t, "OnClose of the connection the server asked to leave", func() bool { return log.count("close") == 1 })
	close(pushNow)
	if err := recv(t, done, "the reply on the drained connection"); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	waitFor(t, "the push counted dropped", func() bool { p, d := reviewPushCounts(comm); return p == 1 && d == 1 })
	if got := log.String(); got != "connect|close" {
		t.Fatalf("callback saw %q; want connect, close and nothing of that connection after its close", got)
	}
}

// The project's server, its only loop held by a slow handler: a call times out, the health
// probe goes unanswered, and the client replaces the connection (OnClose, then OnConnect of the
// new one). Then the handler pushes on the old connection and answers.
func TestPushOnReplacedConnectionDropped(t *testing.T) {
	slow := make(chan struct{})
	var release sync.Once
	addr, subs := startPusher(t, func(s *server.Server) error {
		return s.Handle(pushServant, "Slow", func(_ context.Context, cur *server.Current, req, rsp []byte) ([]byte, error) {
			<-slow
			if err := cur.Push("Late", req); err != nil {
				return nil, err
			}
			return append(rsp, req...), nil
		})
	})
	t.Cleanup(func() { release.Do(func() { close(slow) }) }) // runs before the server's Stop

	comm := newComm(t, onePushThread)
	sp := pushProxy(t, comm, addr)
	log := &pushEvents{}
	sp.SetPushCallback(log.callback())
	subscribe(t, sp, subs)
	waitFor(t, "connect", func() bool { return log.count("connect") == 1 })
	if _, err := sp.InvokeRaw(testCtx(t), "Slow", []byte("x"), servantproxy.WithTimeout(200*time.Millisecond)); !errors.Is(err, communicator.ErrTimeout) {
		t.Fatalf("Slow: %v, want ErrTimeout", err)
	}
	waitFor(t, "the move off the connection whose probe went unanswered", func() bool { return log.count("close") == 1 })
	release.Do(func() { close(slow) })
	waitFor(t, "the late push counted dropped", func() bool { p, d := reviewPushCounts(comm); return p == 1 && d == 1 })
	if got := log.String(); strings.Contains(got, "push") {
		t.Fatalf("callback saw %q: a push made on the connection it was told closed was delivered", got)
	}
}
