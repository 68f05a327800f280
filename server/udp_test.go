package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/datagram"
)

// startUDP starts a UDP server on 127.0.0.1:0 with the handlers of setup, stopped when the test
// ends, and returns it and a UDP socket connected to it.
func startUDP(t testing.TB, setup func(s *Server), opts ...Option) (*Server, *net.UDPConn) {
	t.Helper()
	return startUDPAt(t, "127.0.0.1:0", setup, opts...)
}

// startUDPAt is startUDP on hostPort.
func startUDPAt(t testing.TB, hostPort string, setup func(s *Server), opts ...Option) (*Server, *net.UDPConn) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok { // a fuzz target's F may not log from inside its runs
		opts = append([]Option{WithLogger(zaptest.NewLogger(tt))}, opts...)
	}
	s := New(opts...)
	if setup != nil {
		setup(s)
	}
	addr, err := s.Start("udp://" + hostPort)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	ua, ok := addr.(*net.UDPAddr)
	if !ok || ua.Port == 0 {
		t.Fatalf("Start returned %T %v, want a *net.UDPAddr with a port", addr, addr)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return s, c
}

// sendDatagram sends b as one datagram.
func sendDatagram(t testing.TB, c *net.UDPConn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// recvDatagram reads one datagram within d and decodes it as a response.
func recvDatagram(c *net.UDPConn, d time.Duration) (*codec.ResponsePacket, error) {
	buf := make([]byte, 1<<16)
	if err := c.SetReadDeadline(time.Now().Add(d)); err != nil {
		return nil, err
	}
	n, err := c.Read(buf)
	if err != nil {
		return nil, err
	}
	if err := datagram.Check(buf[:n]); err != nil {
		return nil, err
	}
	rsp := new(codec.ResponsePacket)
	return rsp, codec.DecodeResponse(buf[:n], rsp)
}

// callUDP sends req in one datagram and returns the reply, which must answer it.
func callUDP(t testing.TB, c *net.UDPConn, req *codec.RequestPacket) *codec.ResponsePacket {
	t.Helper()
	sendDatagram(t, c, codec.AppendRequest(nil, req))
	rsp, err := recvDatagram(c, testTimeout)
	if err != nil {
		t.Fatalf("reply to %d: %v", req.RequestID, err)
	}
	if rsp.RequestID != req.RequestID {
		t.Fatalf("reply id = %d, want %d", rsp.RequestID, req.RequestID)
	}
	return rsp
}

func TestUDPServe(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			remote := make(chan string, 1)
			s, c := startUDP(t, func(s *Server) {
				mustHandle(t, s, "App.S.Obj", "Echo", func(ctx context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
					select {
					case remote <- cur.RemoteAddr.String():
					default:
					}
					return echo(ctx, cur, req, rsp)
				})
				mustHandle(t, s, "App.S.Obj", "Big", func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, make([]byte, datagram.MaxSize)...), nil
				})
			}, WithWorkers(workers))

			rsp := callUDP(t, c, request(7, "App.S.Obj", "Echo", []byte("hello")))
			if rsp.Ret != codec.RetOK || string(rsp.Buffer) != "hello" {
				t.Fatalf("echo: ret %d body %q", rsp.Ret, rsp.Buffer)
			}
			if r := <-remote; r != c.LocalAddr().String() {
				t.Errorf("Current.RemoteAddr = %v, want %v", r, c.LocalAddr())
			}
			if rsp := callUDP(t, c, request(8, "App.S.Obj", "Nope", nil)); rsp.Ret != codec.RetNoFunc {
				t.Errorf("unknown function: ret %d", rsp.Ret)
			}
			if rsp := callUDP(t, c, request(9, "App.S.Obj", codec.FuncPing, nil)); rsp.Ret != codec.RetOK {
				t.Errorf("tars_ping: ret %d", rsp.Ret)
			}
			// A reply that cannot fit a datagram is answered with an error saying so.
			rsp = callUDP(t, c, request(10, "App.S.Obj", "Big", nil))
			if rsp.Ret != codec.RetServerEncode || !strings.Contains(rsp.ResultDesc, "65507") {
				t.Errorf("oversize reply: ret %d desc %q", rsp.Ret, rsp.ResultDesc)
			}
			// A larger request is served too.
			body := bytes.Repeat([]byte{'x'}, 1000)
			if rsp := callUDP(t, c, request(11, "App.S.Obj", "Echo", body)); !bytes.Equal(rsp.Buffer, body) {
				t.Errorf("echo of 1000 bytes: got %d bytes", len(rsp.Buffer))
			}
			if n := s.DroppedDatagrams(); n != 0 {
				t.Errorf("DroppedDatagrams = %d, want 0", n)
			}
		})
	}
}

// TestUDPBadDatagrams sends datagrams that are not one decodable request: each is dropped and
// counted, no reply comes, and the server keeps serving.
func TestUDPBadDatagrams(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			s, c := startUDP(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "Echo", echo) }, WithWorkers(workers))
			good := codec.AppendRequest(nil, request(1, "App.S.Obj", "Echo", []byte("x")))
			bad := [][]byte{
				{0, 0, 1},                             // shorter than a header
				good[:len(good)-3],                    // truncated: the header says more
				append(good[:len(good):len(good)], 0), // a trailing byte
				{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff},  // a whole frame that is no RequestPacket
			}
			for i, b := range bad {
				sendDatagram(t, c, b)
				if rsp, err := recvDatagram(c, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("bad datagram %d: got reply %+v, err %v; want nothing", i, rsp, err)
				}
			}
			if rsp := callUDP(t, c, request(2, "App.S.Obj", "Echo", []byte("still"))); string(rsp.Buffer) != "still" {
				t.Fatalf("after bad datagrams: body %q", rsp.Buffer)
			}
			if n := s.DroppedDatagrams(); n != int64(len(bad)) {
				t.Errorf("DroppedDatagrams = %d, want %d", n, len(bad))
			}
		})
	}
}

func TestUDPRefusesConnectionOptions(t *testing.T) {
	s := New(WithLogger(zaptest.NewLogger(t)), WithAuth(func(string) (string, bool) { return "", false }))
	if _, err := s.Start("udp://127.0.0.1:0"); !errors.Is(err, errUDPOptions) {
		t.Fatalf("Start with auth on udp: %v, want %v", err, errUDPOptions)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// TestUDPOneway: a one-way request runs its handler and gets no reply.
func TestUDPOneway(t *testing.T) {
	got := make(chan string, 1)
	_, c := startUDP(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Note", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
			got <- string(req)
			return rsp, nil
		})
	})
	req := request(3, "App.S.Obj", "Note", []byte("n"))
	req.PacketType = codec.PacketOneway
	sendDatagram(t, c, codec.AppendRequest(nil, req))
	select {
	case s := <-got:
		if s != "n" {
			t.Fatalf("handler saw %q", s)
		}
	case <-time.After(testTimeout):
		t.Fatal("one-way handler not run")
	}
	if rsp, err := recvDatagram(c, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("one-way: got reply %+v, err %v", rsp, err)
	}
}

// TestUDPPushRefused: a handler's Push on a UDP server fails with a clear error (a push needs a
// connection); the reply itself is sent.
func TestUDPPushRefused(t *testing.T) {
	pushErr := make(chan error, 1)
	_, c := startUDP(t, func(s *Server) {
		mustHandle(t, s, "App.S.Obj", "Push", func(_ context.Context, cur *Current, _, rsp []byte) ([]byte, error) {
			pushErr <- cur.Push("note", []byte("x"))
			return rsp, nil
		})
	})
	if rsp := callUDP(t, c, request(4, "App.S.Obj", "Push", nil)); rsp.Ret != codec.RetOK {
		t.Fatalf("ret %d", rsp.Ret)
	}
	if err := <-pushErr; !errors.Is(err, errPushUDP) {
		t.Fatalf("Push over udp: %v, want %v", err, errPushUDP)
	}
}

// TestUDPManyLoops: on a fixed port, each event loop has its own socket (SO_REUSEPORT); requests
// from many client sockets, spread over them by the kernel, are all answered from the served
// address, inline and by workers.
func TestUDPManyLoops(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			free, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			addr := free.LocalAddr().String()
			_ = free.Close() // a port this test opened: the server takes it over
			s := New(WithLogger(zaptest.NewLogger(t)), WithNumEventLoop(2), WithWorkers(workers))
			mustHandle(t, s, "App.S.Obj", "Echo", echo)
			bound, err := s.Start("udp://" + addr)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				if err := s.Stop(ctx); err != nil {
					t.Errorf("Stop: %v", err)
				}
			})
			if bound.String() != addr {
				t.Fatalf("bound %v, want %v", bound, addr)
			}
			for i := range 16 {
				c, err := net.DialUDP("udp", nil, bound.(*net.UDPAddr))
				if err != nil {
					t.Fatal(err)
				}
				body := fmt.Appendf(nil, "client %d", i)
				rsp := callUDP(t, c, request(int32(i+1), "App.S.Obj", "Echo", body))
				_ = c.Close()
				if !bytes.Equal(rsp.Buffer, body) {
					t.Fatalf("client %d: body %q", i, rsp.Buffer)
				}
			}
			// The kernel hashes each client's address and port over the two sockets: 16
			// clients all on one has a chance of 2^-15.
			s.loopsMu.Lock()
			n := len(s.loops)
			s.loopsMu.Unlock()
			if n != 2 {
				t.Errorf("%d event loops served the 16 clients, want 2", n)
			}
		})
	}
}

// requestOfSize returns a request frame of exactly n bytes (n large enough for the header fields).
func requestOfSize(t *testing.T, n int) []byte {
	t.Helper()
	for body := n; body > 0; body-- {
		if f := codec.AppendRequest(nil, request(5, "App.S.Obj", "Len", make([]byte, body))); len(f) == n {
			return f
		}
	}
	t.Fatalf("no request frame of %d bytes", n)
	return nil
}

// lenOf answers with the request body's length.
func lenOf(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
	return fmt.Append(rsp, len(req)), nil
}

// TestUDPLimits: a request frame of exactly datagram.MaxSize is served; a larger one (possible
// over IPv6, whose datagrams carry up to 65527 bytes) is dropped and counted, inline and by
// workers (whose replies then go to an IPv6 sender), and the server serves on.
func TestUDPLimits(t *testing.T) {
	_, c := startUDP(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "Len", lenOf) })
	sendDatagram(t, c, requestOfSize(t, datagram.MaxSize))
	rsp, err := recvDatagram(c, testTimeout)
	if err != nil || rsp.Ret != codec.RetOK {
		t.Fatalf("request of exactly %d bytes: %+v, %v", datagram.MaxSize, rsp, err)
	}

	probe, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	_ = probe.Close()
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			s, c := startUDPAt(t, "[::1]:0", func(s *Server) { mustHandle(t, s, "App.S.Obj", "Len", lenOf) }, WithWorkers(workers))
			sendDatagram(t, c, requestOfSize(t, datagram.MaxSize+20))
			if rsp, err := recvDatagram(c, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("oversize datagram: got reply %+v, err %v; want nothing", rsp, err)
			}
			if n := s.DroppedDatagrams(); n != 1 {
				t.Fatalf("DroppedDatagrams = %d, want 1", n)
			}
			if rsp := callUDP(t, c, request(6, "App.S.Obj", "Len", []byte("abc"))); string(rsp.Buffer) != "3" {
				t.Fatalf("after the oversize datagram: %q", rsp.Buffer)
			}
		})
	}
}

// TestUDPMaxPacketSize: WithMaxPacketSize bounds udp requests too (serverconf applies [server]
// max-packet-size to udp adapters): a datagram holding a longer frame is not served but answered
// -1 naming the sizes, as over tcp, and the next request is served. It was served; then it was
// dropped unanswered, and its client waited for its deadline.
func TestUDPMaxPacketSize(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(map[int]string{0: "inline", 2: "workers"}[workers], func(t *testing.T) {
			leakCheck(t)
			const max = 1024
			s, c := startUDP(t, func(s *Server) {
				mustHandle(t, s, "App.S.Obj", "Len", lenOf)
			}, WithMaxPacketSize(max), WithWorkers(workers))
			big := requestOfSize(t, 4*max) // request id 5
			sendDatagram(t, c, big)
			// A small request after it, id 6: the first reply tells whether the big one was
			// served (port 0: one loop, datagrams read in order).
			sendDatagram(t, c, codec.AppendRequest(nil, request(6, "App.S.Obj", "Len", []byte("abc"))))
			rsp, err := recvDatagram(c, testTimeout)
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			want := fmt.Sprintf("exceeds max-packet-size %d", max)
			if rsp.RequestID != 5 || rsp.Ret != codec.RetServerDecode || len(rsp.Buffer) != 0 || !strings.Contains(rsp.ResultDesc, want) {
				t.Fatalf("the first reply: id %d, ret %d, body %q, desc %q; want the request of %d bytes answered -1 (%q)",
					rsp.RequestID, rsp.Ret, rsp.Buffer, rsp.ResultDesc, len(big), want)
			}
			if rsp, err = recvDatagram(c, testTimeout); err != nil || rsp.RequestID != 6 || rsp.Ret != codec.RetOK {
				t.Fatalf("the request after it: %v, %+v", err, rsp)
			}
			if n := s.DroppedDatagrams(); n != 0 {
				t.Fatalf("DroppedDatagrams = %d, want 0", n)
			}
		})
	}
}
