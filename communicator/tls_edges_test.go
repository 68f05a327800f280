package communicator_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// TLS and TARS authentication at their failure edges (client side, with the project's server
// or a hand-written peer on 127.0.0.1).

// leakCheckEach fails t if goroutines started during the test outlive it (for tests and fuzz
// inputs that TestMain's check, run once at the end, would not tell apart). Registered first, it
// runs last: after the servers and Communicators the test started are closed.
func leakCheckEach(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if err := goleak.Find(before,
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		); err != nil {
			t.Errorf("goroutines left after the test: %v", err)
		}
	})
}

// tlsEdgeServer is a project server for SayHello (answering "<name>@<id>") built from opts, whose
// log lines an observer keeps (debug and up), started on addr (127.0.0.1:0 if empty, retried
// for a while if the port lingers).
type tlsEdgeServer struct {
	srv  *server.Server
	addr string
	logs *observer.ObservedLogs
	stop func()
}

func startTLSEdgeServer(t *testing.T, id, addr string, opts ...server.Option) *tlsEdgeServer {
	t.Helper()
	endToEnd(t)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	core, logs := observer.New(zapcore.DebugLevel)
	var (
		s   *server.Server
		a   net.Addr
		err error
	)
	for range 200 {
		s = server.New(append([]server.Option{server.WithLogger(zap.New(core)), server.WithNumEventLoop(1)}, opts...)...)
		err = server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a, err = s.Start(addr); err == nil {
			break
		}
		_ = s.Stop(context.Background())
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("start %s on %s: %v", id, addr, err)
	}
	r := &tlsEdgeServer{srv: s, addr: a.String(), logs: logs}
	var once sync.Once
	r.stop = func() { once.Do(func() { _ = stopServer(t, id, s) }) }
	t.Cleanup(r.stop)
	return r
}

// count returns how many log lines of the server say msg.
func (r *tlsEdgeServer) count(msg string) int { return r.logs.FilterMessage(msg).Len() }

func edgeTLSConfig(t *testing.T, p *tlsPKI, pair tlstest.Pair, mutual bool, maxVersion uint16) *tls.Config {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: p.ca.File, Cert: pair.Cert, Key: pair.Key}, mutual)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxVersion = maxVersion
	return cfg
}

// TestTLSStalledHandshakeDeadlineAndClose: a peer that accepts TCP and never answers the
// ClientHello, with a connect-timeout far longer than the test: sync and async calls end by
// their own deadlines with ErrTimeout, Close returns at once, the peer sees the connection
// closed, and no goroutine is left.
func TestTLSStalledHandshakeDeadlineAndClose(t *testing.T) {
	leakCheckEach(t)
	p := newTLSPKI(t)
	hold := startHold(t)
	c := tlsComm(t, tomlTLS(p.ca.File), func(cfg *conf.Config) { cfg.ConnectTimeout = time.Minute })
	sp := sslProxy(t, c, servant, hold.ln.Addr().String())
	ctx := testCtx(t)
	for _, kind := range []callKind{syncCall, asyncCall} {
		err := callOnce(t, ctx, kind, sp, 1, live, servantproxy.WithTimeout(200*time.Millisecond))
		if !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("%s call during a stalled handshake: %v, want ErrTimeout", kind, err)
		}
	}
	waitFor(t, "the client's connection at the peer", func() bool {
		hold.mu.Lock()
		defer hold.mu.Unlock()
		return len(hold.conns) > 0
	})
	start := time.Now()
	if err := closeComm(t, c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	within(t, "Close during a stalled handshake", time.Since(start), quick)
	hold.mu.Lock()
	conns := append([]net.Conn(nil), hold.conns...)
	hold.mu.Unlock()
	for _, nc := range conns {
		_ = nc.SetReadDeadline(time.Now().Add(live))
		buf := make([]byte, 4096)
		var err error
		for err == nil {
			_, err = nc.Read(buf) // the ClientHello, then the close
		}
		if errors.Is(err, net.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			t.Fatalf("the client's stalled connection was not closed by Close: %v", err)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestTLSAuthStalledDeadlineAndClose: an ssl -e 1 endpoint whose server completes the TLS
// handshake and never answers the auth request, with a long connect-timeout: calls end by their
// own deadlines (ErrTimeout), Close returns at once, and no goroutine is left.
func TestTLSAuthStalledDeadlineAndClose(t *testing.T) {
	leakCheckEach(t)
	p := newTLSPKI(t)
	addr := startDeafTLS(t, p)
	c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), func(cfg *conf.Config) { cfg.ConnectTimeout = time.Minute })
	sp := authProxy(t, c, servant, "ssl", addr)
	ctx := testCtx(t)
	for _, kind := range []callKind{syncCall, asyncCall} {
		err := callOnce(t, ctx, kind, sp, 1, live, servantproxy.WithTimeout(200*time.Millisecond))
		if !errors.Is(err, communicator.ErrTimeout) {
			t.Fatalf("%s call during a stalled auth over TLS: %v, want ErrTimeout", kind, err)
		}
	}
	start := time.Now()
	if err := closeComm(t, c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	within(t, "Close during a stalled auth over TLS", time.Since(start), quick)
}

// TestRefusalsBackOff: an endpoint that refuses the client (its certificate, its key)
// counts as a failed connect each time, so a client calling it in a tight loop for 1.5 s dials
// it a few times a second (backoff 25 ms doubling to 150 ms), not once per call; every call
// fails with the error of the refusal.
func TestRefusalsBackOff(t *testing.T) {
	p := newTLSPKI(t)
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	cases := []struct {
		name    string
		server  func(t *testing.T) []server.Option
		proto   string // ssl or tcp
		e1      bool
		toml    string
		want    error
		logLine string // the server's line per refused connection
	}{
		{"TLS1.3 no client certificate", func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, true, 0))}
		}, "ssl", false, tomlTLS(p.ca.File), communicator.ErrTLS, "tls handshake failed"},
		{"TLS1.2 no client certificate", func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, true, tls.VersionTLS12))}
		}, "ssl", false, tomlTLS(p.ca.File), communicator.ErrTLS, "tls handshake failed"},
		{"wrong secret tcp", func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(keys)}
		}, "tcp", true, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "guess"`), communicator.ErrAuth, "auth: refused, closing"},
		{"unknown access key ssl", func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(keys), server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0))}
		}, "ssl", true, tomlTLS(p.ca.File, `accesskey = "who"`, `secretkey = "s3cret"`), communicator.ErrAuth, "auth: refused, closing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheckEach(t)
			srv := startTLSEdgeServer(t, "refuser", "", tc.server(t)...)
			c := tlsComm(t, tc.toml, nil)
			var sp *servantproxy.ServantProxy
			if tc.e1 {
				sp = authProxy(t, c, servant, tc.proto, srv.addr)
			} else {
				sp = sslProxy(t, c, servant, srv.addr)
			}
			ctx := testCtx(t)
			calls, other := 0, 0
			var firstOther error
			for start := time.Now(); time.Since(start) < 1500*time.Millisecond; calls++ {
				_, err := sayHello(ctx, sp, "x", uint64(calls), servantproxy.WithTimeout(5*time.Second))
				if !errors.Is(err, tc.want) && !strings.Contains(fmt.Sprint(err), "not reconnecting yet") {
					other++
					if firstOther == nil {
						firstOther = err
					}
				}
				if err != nil && errors.Is(err, tc.want) && !errors.Is(err, communicator.ErrConnection) {
					t.Errorf("call %d: %v matches the refusal but not ErrConnection", calls, err)
				}
			}
			refused := srv.count(tc.logLine)
			t.Logf("%d calls in 1.5 s; the server refused %d connections; %d calls with another error (first: %v)", calls, refused, other, firstOther)
			if other > 0 {
				t.Errorf("%d of %d calls failed with something else than %v: first %v", other, calls, tc.want, firstOther)
			}
			if refused == 0 {
				t.Fatalf("the server refused no connection (no %q line)", tc.logLine)
			}
			if refused > 40 {
				t.Errorf("the client dialled the refusing endpoint %d times in 1.5 s (%d calls): no backoff", refused, calls)
			}
		})
	}
}

// TestFixedServerUsedAgain: a server that refuses the client (expired certificate, a
// client certificate required, a different secret) is stopped and started again on the same port
// with settings the client meets: the same Communicator and proxy reach it, without a restart.
func TestFixedServerUsedAgain(t *testing.T) {
	p := newTLSPKI(t)
	good := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	other := func(ak string) (string, bool) { return "rotated", ak == "app" }
	cases := []struct {
		name      string
		bad, good func(t *testing.T) []server.Option
		proto     string
		e1        bool
		want      error
	}{
		{"expired certificate", func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.expired, false, 0))}
		}, func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0))}
		}, "ssl", false, communicator.ErrTLS},
		{"client certificate required TLS1.3", func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, true, 0))}
		}, func(t *testing.T) []server.Option {
			return []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0))}
		}, "ssl", false, communicator.ErrTLS},
		{"secret rotated back tcp", func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(other)}
		}, func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(good)}
		}, "tcp", true, communicator.ErrAuth},
		{"secret rotated back ssl", func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(other), server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0))}
		}, func(t *testing.T) []server.Option {
			return []server.Option{server.WithAuth(good), server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0))}
		}, "ssl", true, communicator.ErrAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheckEach(t)
			bad := startTLSEdgeServer(t, "bad", "", tc.bad(t)...)
			c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
			var sp *servantproxy.ServantProxy
			if tc.e1 {
				sp = authProxy(t, c, servant, tc.proto, bad.addr)
			} else {
				sp = sslProxy(t, c, servant, bad.addr)
			}
			ctx := testCtx(t)
			for i := range 3 {
				if _, err := sayHello(ctx, sp, "x", uint64(i)); !errors.Is(err, tc.want) && !strings.Contains(fmt.Sprint(err), "not reconnecting yet") {
					t.Fatalf("call %d to the refusing server: %v, want %v", i, err, tc.want)
				}
				time.Sleep(50 * time.Millisecond)
			}
			bad.stop()
			fixed := startTLSEdgeServer(t, "fixed", bad.addr, tc.good(t)...)
			var last error
			took := waitFor(t, "a call served by the fixed server", func() bool {
				var from string
				from, last = sayHello(ctx, sp, "y", 7, servantproxy.WithTimeout(2*time.Second))
				if last == nil && from != "fixed" {
					t.Fatalf("answered by %q", from)
				}
				if last != nil {
					time.Sleep(20 * time.Millisecond)
				}
				return last == nil
			})
			t.Logf("served by the fixed server %v after its start (last error before: %v)", took, last)
			_ = fixed
		})
	}
}

// TestMutualBadClientCertificates: a mutual-TLS server and a client whose certificate is
// signed by another CA, or expired: calls fail with ErrTLS and ErrConnection, not ErrAuth, naming
// the endpoint; the error says a certificate is the problem.
func TestMutualBadClientCertificates(t *testing.T) {
	p := newTLSPKI(t)
	rogue := p.other.Issue(t, tlstest.Leaf{Name: "rogue", Client: true})
	expired := p.ca.Issue(t, tlstest.Leaf{Name: "olduser", Client: true, Expired: true})
	for _, v := range []struct {
		name string
		max  uint16
	}{{"TLS1.3", 0}, {"TLS1.2", tls.VersionTLS12}} {
		for _, cc := range []struct {
			name       string
			cert, key  string
			wantInText []string
		}{
			// None of this side's certificates is one the server asked for, so none was sent:
			// the error says so (before, it read "certificate required", or "set cert and key",
			// with cert and key set).
			{"other CA", rogue.Cert, rogue.Key, []string{"certificate", "none of this side's (cert) is"}},
			{"expired", expired.Cert, expired.Key, []string{"certificate"}},
		} {
			t.Run(v.name+" "+cc.name, func(t *testing.T) {
				leakCheckEach(t)
				srv := startTLSEdgeServer(t, "mtls", "", server.WithTLS(edgeTLSConfig(t, p, p.server, true, v.max)))
				c := tlsComm(t, tomlTLS(p.ca.File, fmt.Sprintf("cert = %q\nkey = %q", cc.cert, cc.key)), nil)
				sp := sslProxy(t, c, servant, srv.addr)
				_, err := sayHello(testCtx(t), sp, "x", 1)
				t.Logf("%v", err)
				if !errors.Is(err, communicator.ErrTLS) || !errors.Is(err, communicator.ErrConnection) || errors.Is(err, communicator.ErrAuth) {
					t.Fatalf("%v: want ErrTLS and ErrConnection, not ErrAuth", err)
				}
				for _, w := range append(cc.wantInText, srv.addr) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			})
		}
	}
}

// rawAuthServer is a hand-written TARS server (over TLS when cfg is set) that answers the auth
// request as answer says and then answers SayHello like the greeters ("<name>@raw", the seq).
func startRawAuthServer(t *testing.T, cfg *tls.Config, answer func(req *codec.RequestPacket) []byte) string {
	t.Helper()
	endToEnd(t)
	ln := listenLoopback(t)
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	s := serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		_ = readRequests(c, 0, func(req *codec.RequestPacket) bool {
			if auth.IsRequest(req) {
				_, err := c.Write(answer(req))
				return err == nil
			}
			if req.PacketType == codec.PacketOneway {
				return true // no reply
			}
			var in hellopb.HelloRequest
			if err := proto.Unmarshal(req.Buffer, &in); err != nil {
				return false
			}
			body, _ := proto.Marshal(&hellopb.HelloReply{Message: in.GetName() + "@raw", Seq: in.GetSeq()})
			_, err := c.Write(replyFrame(req, req.RequestID, body))
			return err == nil
		})
	})
	return s.addr()
}

// TestAuthAnsweredTwice: a server that answers the auth request twice (the second
// AUTH_SUCC glued to the first, request id 1, as a server repeating its answer would send it).
// Before, the connection's first call also got request id 1, and the repeated answer was taken
// for its reply (it succeeded, empty); no call takes id 1 now (codec.RequestIDAuth). The call
// must get the server's real reply, or fail; it must not succeed with "AUTH_SUCC" decoded as its
// reply.
func TestAuthAnsweredTwice(t *testing.T) {
	p := newTLSPKI(t)
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			leakCheckEach(t)
			var cfg *tls.Config
			if proto == "ssl" {
				cfg = edgeTLSConfig(t, p, p.server, false, 0)
			}
			addr := startRawAuthServer(t, cfg, func(req *codec.RequestPacket) []byte {
				return auth.AppendResponse(auth.AppendResponse(nil, req), req)
			})
			c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
			sp := authProxy(t, c, servant, proto, addr)
			rsp := new(hellopb.HelloReply)
			err := sp.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "first", Seq: 42}, rsp)
			t.Logf("first call: err %v, reply %q seq %d", err, rsp.GetMessage(), rsp.GetSeq())
			if err == nil {
				if _, cerr := checkReply(rsp, "first", 42); cerr != nil {
					t.Errorf("the first call succeeded with a reply that is not its own (the repeated auth answer, request id 1): %v", cerr)
				}
			}
			// Later calls are served.
			if _, err := sayHello(testCtx(t), sp, "second", 43); err != nil {
				t.Errorf("second call: %v", err)
			}
		})
	}
}

// TestAuthAnswerNotFirst: a server whose first packet on the connection is not the answer
// to the auth request (a push, a reply to another id, a request of its own): the calls fail with
// ErrAuth and ErrConnection naming the endpoint, within the connect timeout.
func TestAuthAnswerNotFirst(t *testing.T) {
	p := newTLSPKI(t)
	for _, v := range []struct {
		name  string
		first func(req *codec.RequestPacket) []byte
	}{
		{"push first", func(req *codec.RequestPacket) []byte {
			b := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: codec.PushRequestID,
				Buffer: []byte("tick"), Status: map[string]string{"TARS_FUNC": "Tick"}})
			return auth.AppendResponse(b, req)
		}},
		{"other id first", func(req *codec.RequestPacket) []byte {
			b := codec.AppendResponse(nil, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: 5, Buffer: []byte("AUTH_SUCC")})
			return auth.AppendResponse(b, req)
		}},
		{"request first", func(req *codec.RequestPacket) []byte {
			b := codec.AppendRequest(nil, &codec.RequestPacket{Version: codec.VersionTars, RequestID: 1, ServantName: "X.Y.Z", FuncName: "f"})
			return auth.AppendResponse(b, req)
		}},
	} {
		for _, proto := range []string{"tcp", "ssl"} {
			t.Run(v.name+" "+proto, func(t *testing.T) {
				leakCheckEach(t)
				var cfg *tls.Config
				if proto == "ssl" {
					cfg = edgeTLSConfig(t, p, p.server, false, 0)
				}
				addr := startRawAuthServer(t, cfg, v.first)
				c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), nil)
				sp := authProxy(t, c, servant, proto, addr)
				start := time.Now()
				_, err := sayHello(testCtx(t), sp, "x", 1)
				t.Log(err)
				if !errors.Is(err, communicator.ErrAuth) || !errors.Is(err, communicator.ErrConnection) || !strings.Contains(fmt.Sprint(err), addr) {
					t.Fatalf("%v: want ErrAuth and ErrConnection naming %s", err, addr)
				}
				within(t, "the refused call", time.Since(start), quick)
			})
		}
	}
}

// TestTLSPushes: pushes over an ssl endpoint (and ssl with -e 1), small and of 1 MiB,
// reach the push callback whole and in order, and calls go on beside them.
func TestTLSPushes(t *testing.T) {
	p := newTLSPKI(t)
	for _, e1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("e1=%v", e1), func(t *testing.T) {
			leakCheckEach(t)
			subs := make(chan *server.Pusher, 4)
			opts := []server.Option{server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0)), server.WithNumEventLoop(1)}
			if e1 {
				opts = append(opts, server.WithAuth(func(ak string) (string, bool) { return "s3cret", ak == "app" }))
			}
			endToEnd(t)
			s := server.New(append(opts, server.WithLogger(zap.NewNop()))...)
			if err := s.Handle(pushServant, "Subscribe", func(_ context.Context, cur *server.Current, _, rsp []byte) ([]byte, error) {
				subs <- cur.Pusher()
				return append(rsp, "subscribed"...), nil
			}); err != nil {
				t.Fatal(err)
			}
			a, err := s.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stopServer(t, "push server", s) })
			comm := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), func(c *conf.Config) {
				livenessTimeouts(c)
				onePushThread(c) // one async worker: pushes reach OnPush in order
			})
			host, port, _ := net.SplitHostPort(a.String())
			ep := fmt.Sprintf("%s@ssl -h %s -p %s", pushServant, host, port)
			if e1 {
				ep += " -e 1"
			}
			sp, err := comm.Proxy(ep)
			if err != nil {
				t.Fatal(err)
			}
			pushes := make(chan *servantproxy.Push, 256)
			sp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(p *servantproxy.Push) { pushes <- p }})
			pu := subscribe(t, sp, subs)
			const n = 40
			body := func(i int) []byte {
				if i%10 == 9 {
					return bytes.Repeat([]byte{byte(i)}, 1<<20)
				}
				return []byte(strconv.Itoa(i))
			}
			go func() {
				for i := range n {
					for {
						err := pu.Push("Tick", body(i))
						if !errors.Is(err, server.ErrPushBacklog) {
							if err != nil {
								t.Errorf("Push %d: %v", i, err)
							}
							break
						}
						time.Sleep(time.Millisecond)
					}
				}
			}()
			for i := range n {
				got := recv(t, pushes, "push "+strconv.Itoa(i))
				if got.Func != "Tick" || !bytes.Equal(got.Body, body(i)) {
					t.Fatalf("push %d: func %q, %d bytes; want Tick with %d bytes", i, got.Func, len(got.Body), len(body(i)))
				}
			}
			subscribe(t, sp, subs)
		})
	}
}

// startSlowTLSEcho is a TLS server (crypto/tls) that reads its clients slowly (chunk bytes per
// pause) and answers each request with its own body.
func startSlowTLSEcho(t *testing.T, p *tlsPKI, chunk int, pause time.Duration) string {
	t.Helper()
	endToEnd(t)
	cfg := edgeTLSConfig(t, p, p.server, false, 0)
	ln := tls.NewListener(listenLoopback(t), cfg)
	s := serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		_ = readRequests(&slowTLSReader{Conn: c, chunk: chunk, pause: pause}, 16<<20, func(req *codec.RequestPacket) bool {
			_, err := c.Write(replyFrame(req, req.RequestID, req.Buffer))
			return err == nil
		})
	})
	return s.addr()
}

type slowTLSReader struct {
	net.Conn
	chunk int
	pause time.Duration
}

func (r *slowTLSReader) Read(p []byte) (int, error) {
	time.Sleep(r.pause)
	return r.Conn.Read(p[:min(len(p), r.chunk)])
}

// TestTLSLargeSlowPeer: 1, 4 and 8 MiB requests at once over one TLS connection to a
// peer that reads 64 KiB per millisecond and echoes them: each reply is its own request; then a
// second round with a deadline too short for the slow peer: each call ends once, by its
// deadline, and Close returns with megabytes of records still unsent.
func TestTLSLargeSlowPeer(t *testing.T) {
	leakCheckEach(t)
	p := newTLSPKI(t)
	addr := startSlowTLSEcho(t, p, 64<<10, time.Millisecond)
	c := tlsComm(t, tomlTLS(p.ca.File, "max-packet-size = 16777216"), livenessTimeouts)
	sp := sslProxy(t, c, servant, addr)
	ctx := testCtx(t)
	sizes := []int{1 << 20, 4 << 20, 8 << 20}
	var wg sync.WaitGroup
	for i, n := range sizes {
		wg.Go(func() {
			body := bytes.Repeat([]byte{byte('a' + i)}, n)
			got, err := sp.InvokeRaw(ctx, "Echo", body)
			if err != nil {
				t.Errorf("%d bytes: %v", n, err)
				return
			}
			if !bytes.Equal(got, body) {
				t.Errorf("%d bytes: got %d bytes back, not the request", n, len(got))
			}
		})
	}
	wg.Wait()

	// The slow peer takes ~130 ms per 8 MiB at best; many at once with 100 ms deadlines.
	var ends atomic.Int32
	errs := make(chan error, 16)
	for i := range 8 {
		body := bytes.Repeat([]byte{byte(i)}, 8<<20)
		err := sp.AsyncInvokeRaw(ctx, "Echo", body, func(_ []byte, err error) {
			ends.Add(1)
			errs <- err
		}, servantproxy.WithTimeout(100*time.Millisecond))
		if err != nil && !errors.Is(err, communicator.ErrQueueFull) {
			t.Fatalf("async call %d refused: %v", i, err)
		}
		if err != nil {
			ends.Add(1)
			errs <- err
		}
	}
	for range 8 {
		err := recv(t, errs, "an 8 MiB call's end")
		if err != nil && !errors.Is(err, communicator.ErrTimeout) && !errors.Is(err, communicator.ErrQueueFull) {
			t.Errorf("8 MiB call to a slow peer: %v, want success, ErrTimeout or ErrQueueFull", err)
		}
	}
	start := time.Now()
	if err := closeComm(t, c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	within(t, "Close with large TLS writes pending", time.Since(start), quick)
	if n := ends.Load(); n != 8 {
		t.Fatalf("%d ends for 8 calls", n)
	}
	select {
	case err := <-errs:
		t.Fatalf("a call ended twice: %v", err)
	default:
	}
}

// TestTLSAuthKillMidFlight: 200 async and 20 sync calls, some of 1 MiB, in flight over an
// ssl -e 1 connection whose server holds them in its handlers, then the server dies (its Stop
// gives up at once and closes the connections): every call ends exactly once, with an error,
// within the liveness bound, and Close returns.
func TestTLSAuthKillMidFlight(t *testing.T) {
	leakCheckEach(t)
	endToEnd(t)
	p := newTLSPKI(t)
	keys := func(ak string) (string, bool) { return "s3cret", ak == "app" }
	var held atomic.Int32
	release := make(chan struct{})
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1), server.WithWorkers(64),
		server.WithTLS(edgeTLSConfig(t, p, p.server, false, 0)), server.WithAuth(keys))
	if err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		held.Add(1)
		<-release
		return &hellopb.HelloReply{Message: req.GetName() + "@kill", Seq: req.GetSeq()}, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "kill", s) })
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, Stop ends
	c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), livenessTimeouts)
	sp := authProxy(t, c, servant, "ssl", a.String())
	ctx := testCtx(t)
	var (
		ends atomic.Int32
		ok   atomic.Int32
		wg   sync.WaitGroup
	)
	for i := range 200 {
		name := "a"
		if i%20 == 0 {
			name = strings.Repeat("b", 1<<20)
		}
		done, err := asyncHello(t, ctx, sp, name, uint64(i))
		if err != nil {
			t.Fatalf("async %d refused: %v", i, err)
		}
		wg.Go(func() {
			select {
			case err := <-done:
				ends.Add(1)
				if err == nil {
					ok.Add(1)
				}
			case <-time.After(3 * live):
				t.Errorf("async call %d did not end", i)
			}
		})
	}
	for i := range 20 {
		wg.Go(func() {
			_, err := sayHello(ctx, sp, strings.Repeat("s", 256<<10), uint64(1000+i))
			ends.Add(1)
			if err == nil {
				ok.Add(1)
			}
		})
	}
	waitFor(t, "64 calls held by the handlers", func() bool { return held.Load() >= 64 })
	kctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	_ = s.Stop(kctx) // gives up at once: the connections close under the held calls
	cancel()
	wg.Wait()
	if n := ends.Load(); n != 220 {
		t.Fatalf("%d ends for 220 calls", n)
	}
	if ok.Load() != 0 {
		t.Errorf("%d calls succeeded, though every handler was held until after the kill", ok.Load())
	}
}

// TestPushGluedToAuthAnswer: a server that pushes on a connection as soon as it has
// accepted its authentication, in the same write as AUTH_SUCC (nothing in TARS forbids a push
// before the first request). The client's first call is one-way, so nothing else comes. Over
// tcp the push reaches the callback; over ssl it must too (TLS calls keep every rule of plain
// ones): the record holding it was read with the auth answer, before the loop took over, and
// before, it waited in the session's buffers for bytes that never came.
func TestPushGluedToAuthAnswer(t *testing.T) {
	p := newTLSPKI(t)
	for _, proto := range []string{"tcp", "ssl"} {
		t.Run(proto, func(t *testing.T) {
			leakCheckEach(t)
			var cfg *tls.Config
			if proto == "ssl" {
				cfg = edgeTLSConfig(t, p, p.server, false, 0)
			}
			addr := startRawAuthServer(t, cfg, func(req *codec.RequestPacket) []byte {
				b := auth.AppendResponse(nil, req)
				return codec.AppendResponse(b, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: codec.PushRequestID,
					Buffer: []byte("welcome"), Status: map[string]string{"TARS_FUNC": "Hello"}})
			})
			c := tlsComm(t, tomlTLS(p.ca.File, `accesskey = "app"`, `secretkey = "s3cret"`), onePushThread)
			sp := authProxy(t, c, servant, proto, addr)
			pushes := make(chan *servantproxy.Push, 4)
			sp.SetPushCallback(&servantproxy.PushCallback{OnPush: func(p *servantproxy.Push) { pushes <- p }})
			if err := onewayHello(testCtx(t), sp, "x", 1); err != nil {
				t.Fatalf("one-way call: %v", err)
			}
			select {
			case got := <-pushes:
				if got.Func != "Hello" || string(got.Body) != "welcome" {
					t.Fatalf("push %+v", got)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("the push sent with the auth answer did not reach the callback within 5 s (%s)", proto)
			}
		})
	}
}

// TestMutualIdleCloseIsNotTLSFailure: a mutual-TLS server that accepted the client's
// certificate and ran its one-way calls closes the idle connection (WithIdleTimeout). That is
// an idle close, not a refused certificate: the close reported to the push callback must not
// match ErrTLS (before, any silent close after a handshake that asked for a certificate did).
func TestMutualIdleCloseIsNotTLSFailure(t *testing.T) {
	leakCheckEach(t)
	p := newTLSPKI(t)
	var ran atomic.Int32
	endToEnd(t)
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1), server.WithIdleTimeout(300*time.Millisecond),
		server.WithTLS(edgeTLSConfig(t, p, p.server, true, 0)))
	if err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		ran.Add(1)
		return &hellopb.HelloReply{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "idle", s) })
	c := tlsComm(t, tomlTLS(p.ca.File, fmt.Sprintf("cert = %q\nkey = %q", p.user.Cert, p.user.Key)), onePushThread)
	sp := sslProxy(t, c, servant, a.String())
	closes := make(chan error, 4)
	sp.SetPushCallback(&servantproxy.PushCallback{OnClose: func(_ string, err error) { closes <- err }})
	if err := onewayHello(testCtx(t), sp, "x", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the one-way call run", func() bool { return ran.Load() == 1 })
	err = recv(t, closes, "the idle close")
	t.Logf("close: %v", err)
	if errors.Is(err, communicator.ErrTLS) {
		t.Errorf("the server's idle close of a connection whose certificate it accepted (and whose call it ran) is reported as a TLS failure: %v", err)
	}
}
