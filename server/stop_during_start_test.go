package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tarscomm/tarscomm/codec"
)

// holdCore is a zap core that holds the goroutine logging the message msg until release is
// closed, and says on reached that it got there: it pauses Start at its last step (the
// "listening" log, after the engine booted and before Start returns) so that a Stop can be made
// to run while Start is under way, deterministically.
type holdCore struct {
	zapcore.Core
	msg     string
	reached chan struct{}
	once    *sync.Once
	release chan struct{}
}

func (c holdCore) With(f []zapcore.Field) zapcore.Core {
	return holdCore{Core: c.Core.With(f), msg: c.msg, reached: c.reached, once: c.once, release: c.release}
}

func (c holdCore) Enabled(zapcore.Level) bool { return true }

func (c holdCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == c.msg {
		c.once.Do(func() { close(c.reached) })
		<-c.release
	}
	return ce
}

// TestStopDuringStartGivesUp: a Stop whose ctx ends while Start is still under way returns
// ctx.Err(), as documented for a Stop that gives up, and the server does not serve on once Start
// returns: a new request is not answered RetOK ("Stop refuses new connections ... and new
// requests"; "a Stop with a ctx already ended still shuts a started server down"). Before, such
// a Stop left no trace: once Start returned the server accepted connections and answered
// requests as if Stop had never been called (a program that called Stop on a signal while Start
// ran kept a server serving forever).
func TestStopDuringStartGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ended bool // the ctx has ended before Stop is called; else it times out during Stop
	}{{"endedCtx", true}, {"ctxTimesOut", false}} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			hc := holdCore{Core: zapcore.NewNopCore(), msg: "listening", reached: make(chan struct{}), once: new(sync.Once),
				release: make(chan struct{})}
			log := zap.New(hc)
			s := New(WithLogger(log), WithWorkers(1), WithNumEventLoop(1))
			mustHandle(t, s, pbServant, "Echo", echo)
			stopOnCleanup(t, s)

			type result struct {
				addr net.Addr
				err  error
			}
			started := make(chan result, 1)
			go func() {
				a, err := s.Start("127.0.0.1:0")
				started <- result{a, err}
			}()
			select {
			case <-hc.reached: // Start is at its last step: the engine runs, Start has not returned
			case <-time.After(testTimeout):
				close(hc.release)
				t.Fatal("Start did not reach its listening log")
			}

			var ctx context.Context
			var cancel context.CancelFunc
			if tc.ended {
				ctx, cancel = context.WithCancel(context.Background())
				cancel()
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
			}
			defer cancel()
			stopErr := s.Stop(ctx)
			close(hc.release)
			r := <-started
			if r.err != nil {
				// Refusing to start once Stop was called is fine too: nothing serves then.
				t.Logf("Start: %v", r.err)
				return
			}
			if !errors.Is(stopErr, context.Canceled) && !errors.Is(stopErr, context.DeadlineExceeded) {
				t.Fatalf("Stop during Start: %v, want the ctx's error (it gave up waiting)", stopErr)
			}

			// Stop was called and gave up; the server must not serve as if nothing happened.
			c, err := net.DialTimeout("tcp", r.addr.String(), time.Second)
			if err != nil {
				return // refused: fine
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := c.Write(codec.AppendRequest(nil, request(1, pbServant, "Echo", []byte("after stop")))); err != nil {
				return
			}
			f, err := codec.NewFrameReader(c, 0).Next()
			if err != nil {
				return // closed: fine
			}
			var rsp codec.ResponsePacket
			if err := codec.DecodeResponse(f, &rsp); err != nil {
				t.Fatal(err)
			}
			if rsp.Ret == codec.RetOK {
				t.Fatalf("after Stop(ctx) returned %v during Start, a new connection's request was served: ret %d body %q; "+
					"want it refused (%d, %q) or the connection closed: the Stop left the server running as if never stopped",
					stopErr, rsp.Ret, rsp.Buffer, codec.RetOverload, stoppingDesc)
			}
		})
	}
}
