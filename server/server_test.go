package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tarscomm/tarscomm/codec"
)

const (
	pbServant   = "Anchor.EchoServer.EchoPbObj"
	tarsServant = "Anchor.EchoServer.EchoTarsObj"
	// otherServant has functions named like pbServant's.
	otherServant = "Anchor.OtherServer.OtherObj"
)

// modes runs a test body in inline and in worker mode.
var modes = []struct {
	name string
	opts []Option
}{
	{name: "inline", opts: []Option{WithWorkers(0)}},
	{name: "workers", opts: []Option{WithWorkers(4)}},
}

// tarsEcho serves `int echo(vector<byte> req, out vector<byte> rsp)` of a .tars interface:
// the parameter at tag 1, the return value at tag 0 and rsp at tag 2.
func tarsEcho(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
	in, err := codec.NewDecoder(req).ReadBytes(1, true)
	if err != nil {
		return nil, &Error{Code: codec.RetServerDecode, Desc: err.Error()}
	}
	e := codec.Encoder{Buf: rsp}
	e.WriteInt32(0, 0)
	e.WriteBytes(2, in)
	return e.Buf, nil
}

// TestVectors sends the protocol's request test vectors (captured from TarsGo v1.4.6) and
// checks the replies: byte for byte where the server answers as TarsGo does, by fields where
// the two differ by design (unknown function: -3 like TarsCpp instead of TarsGo's 1).
func TestVectors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
				mustHandle(t, s, tarsServant, "echo", tarsEcho)
			}, m.opts...)
			c := dial(t, addr)

			exact := []struct {
				name, req, rsp string
			}{
				{
					name: "echo id 1",
					req:  "0000004110012c3c4001561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c",
					rsp:  "0000001a10012c30014c5c6d0000090a0568656c6c6f1007780c",
				},
				{
					name: "tars_ping id 6",
					req:  "0000003c10012c3c4006561b416e63686f722e4563686f5365727665722e4563686f50624f626a6609746172735f70696e677d000c810bb8980ca80c",
					rsp:  "0000001010012c30064c5c6d000c780c",
				},
				{
					name: "tars interface id 9",
					req:  "0000004310012c3c4009561d416e63686f722e4563686f5365727665722e4563686f546172734f626a66046563686f7d0000091d00000568656c6c6f810bb8980ca80c",
					rsp:  "0000001b10012c30094c5c6d00000a0c2d00000568656c6c6f780c",
				},
			}
			for _, v := range exact {
				c.write(unhex(t, v.req))
				got, err := c.readFrame(testTimeout)
				if err != nil {
					t.Fatalf("%s: read: %v", v.name, err)
				}
				if want := unhex(t, v.rsp); !bytes.Equal(got, want) {
					t.Errorf("%s: reply\n got %x\nwant %x", v.name, got, want)
				}
			}

			// Id 2 carries a context; TarsGo does not echo it, nor do we.
			c.write(unhex(t, "0000004810012c3c4002561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb898000106016b160176a80c"))
			rsp := c.recv()
			if rsp.RequestID != 2 || rsp.Ret != codec.RetOK || !bytes.Equal(rsp.Buffer, unhex(t, "0a0568656c6c6f1007")) ||
				rsp.Version != codec.VersionTars || rsp.PacketType != codec.PacketNormal {
				t.Errorf("context request: got %+v", rsp)
			}

			// Unknown function, id 3: TarsGo answers 1 "func mismatch"; we answer -3 like TarsCpp.
			req := request(3, pbServant, "NoSuchFunc", unhex(t, "0a0568656c6c6f1007"))
			rsp = c.call(req)
			if rsp.Ret != codec.RetNoFunc || rsp.ResultDesc == "" || len(rsp.Buffer) != 0 {
				t.Errorf("unknown function: got ret %d desc %q body %x, want ret %d with a description",
					rsp.Ret, rsp.ResultDesc, rsp.Buffer, codec.RetNoFunc)
			}

			// One-way id 7: no reply; the next reply answers the next request.
			c.write(unhex(t, "00000042100120013c4007561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c"))
			c.write(unhex(t, exact[1].req))
			if rsp := c.recv(); rsp.RequestID != 6 {
				t.Errorf("after one-way: got reply id %d, want 6 (the ping)", rsp.RequestID)
			}
		})
	}
}

func TestPipelined(t *testing.T) {
	const n = 2000
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
			}, m.opts...)
			c := dial(t, addr)
			var buf []byte
			for i := range n {
				buf = codec.AppendRequest(buf, request(int32(i+1), pbServant, "Echo", fmt.Appendf(nil, "body-%d", i+1)))
			}
			c.write(buf)
			seen := make(map[int32]bool, n)
			for range n {
				rsp := c.recv()
				if want := fmt.Sprintf("body-%d", rsp.RequestID); rsp.Ret != codec.RetOK || string(rsp.Buffer) != want {
					t.Fatalf("reply id %d: ret %d body %q, want 0 %q", rsp.RequestID, rsp.Ret, rsp.Buffer, want)
				}
				if seen[rsp.RequestID] {
					t.Fatalf("reply id %d twice", rsp.RequestID)
				}
				seen[rsp.RequestID] = true
			}
			if len(seen) != n {
				t.Fatalf("got %d distinct replies, want %d", len(seen), n)
			}
		})
	}
}

func TestSplitFrames(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
			}, m.opts...)
			c := dial(t, addr)
			var buf []byte
			buf = codec.AppendRequest(buf, request(1, pbServant, "Echo", []byte("first")))
			buf = codec.AppendRequest(buf, request(2, pbServant, "Echo", []byte("second")))
			for i := range buf {
				c.write(buf[i : i+1])
				if i%7 == 0 {
					time.Sleep(time.Millisecond) // let some bytes arrive alone
				}
			}
			for _, want := range []string{"first", "second"} {
				if rsp := c.recv(); string(rsp.Buffer) != want {
					t.Fatalf("reply id %d body %q, want %q", rsp.RequestID, rsp.Buffer, want)
				}
			}

			// A large body arriving in many reads.
			big := bytes.Repeat([]byte("0123456789"), 100_000)
			frame := codec.AppendRequest(nil, request(3, pbServant, "Echo", big))
			for len(frame) > 0 {
				k := min(len(frame), 30_000)
				c.write(frame[:k])
				frame = frame[k:]
			}
			if rsp := c.recv(); rsp.RequestID != 3 || !bytes.Equal(rsp.Buffer, big) {
				t.Fatalf("big reply: id %d, %d bytes, want id 3 and %d bytes", rsp.RequestID, len(rsp.Buffer), len(big))
			}
		})
	}
}

func TestReturnCodes(t *testing.T) {
	errPlain := errors.New("plain failure")
	handlers := map[string]HandlerFunc{
		"Plain": func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			return []byte("ignored"), errPlain
		},
		"Coded": func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			return nil, &Error{Code: 42, Desc: "coded failure"}
		},
		"Wrapped": func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			return nil, fmt.Errorf("context: %w", &Error{Code: codec.RetOverload, Desc: "busy"})
		},
		"Panic": func(context.Context, *Current, []byte, []byte) ([]byte, error) {
			panic("boom")
		},
		"Echo": echo,
	}
	tests := []struct {
		name      string
		servant   string
		fn        string
		wantRet   int32
		wantDesc  string // substring
		wantBody  string
		emptyDesc bool
	}{
		{name: "ok", servant: pbServant, fn: "Echo", wantRet: codec.RetOK, wantBody: "hi", emptyDesc: true},
		{name: "unknown servant", servant: "No.Such.Obj", fn: "Echo", wantRet: codec.RetNoServant, wantDesc: "No.Such.Obj"},
		{name: "unknown function", servant: pbServant, fn: "Nope", wantRet: codec.RetNoFunc, wantDesc: "Nope"},
		{name: "plain error", servant: pbServant, fn: "Plain", wantRet: codec.RetUnknown, wantDesc: "plain failure"},
		{name: "*Error", servant: pbServant, fn: "Coded", wantRet: 42, wantDesc: "coded failure"},
		{name: "wrapped *Error", servant: pbServant, fn: "Wrapped", wantRet: codec.RetOverload, wantDesc: "busy"},
		{name: "panic", servant: pbServant, fn: "Panic", wantRet: codec.RetUnknown, wantDesc: "boom"},
		{name: "alive after panic", servant: pbServant, fn: "Echo", wantRet: codec.RetOK, wantBody: "hi", emptyDesc: true},
		{name: "ping", servant: pbServant, fn: codec.FuncPing, wantRet: codec.RetOK, emptyDesc: true},
		{name: "ping unknown servant", servant: "No.Such.Obj", fn: codec.FuncPing, wantRet: codec.RetNoServant, wantDesc: "No.Such.Obj"},
		{name: "same function, other servant", servant: otherServant, fn: "Echo", wantRet: codec.RetOK, wantBody: "other", emptyDesc: true},
		{name: "back to the first servant", servant: pbServant, fn: "Echo", wantRet: codec.RetOK, wantBody: "hi", emptyDesc: true},
		{name: "function of the other servant only", servant: pbServant, fn: "OnlyOther", wantRet: codec.RetNoFunc, wantDesc: "OnlyOther"},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				for fn, h := range handlers {
					mustHandle(t, s, pbServant, fn, h)
				}
				other := func(_ context.Context, _ *Current, _, rsp []byte) ([]byte, error) {
					return append(rsp, "other"...), nil
				}
				mustHandle(t, s, otherServant, "Echo", other)
				mustHandle(t, s, otherServant, "OnlyOther", other)
			}, m.opts...)
			c := dial(t, addr)
			for i, tt := range tests {
				var body []byte
				if tt.fn != codec.FuncPing {
					body = []byte("hi")
				}
				req := request(int32(100+i), tt.servant, tt.fn, body)
				req.MessageType = codec.MessageHash
				rsp := c.call(req)
				if rsp.Ret != tt.wantRet || !strings.Contains(rsp.ResultDesc, tt.wantDesc) ||
					string(rsp.Buffer) != tt.wantBody || (tt.emptyDesc && rsp.ResultDesc != "") {
					t.Errorf("%s: got ret %d desc %q body %q, want ret %d desc containing %q body %q",
						tt.name, rsp.Ret, rsp.ResultDesc, rsp.Buffer, tt.wantRet, tt.wantDesc, tt.wantBody)
				}
				if rsp.Version != codec.VersionTars || rsp.PacketType != codec.PacketNormal || rsp.MessageType != codec.MessageHash {
					t.Errorf("%s: got version %d type %d message type %d, want the request's", tt.name,
						rsp.Version, rsp.PacketType, rsp.MessageType)
				}
			}
		})
	}
}

func TestCurrentAndResponseMaps(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var got atomic.Pointer[Current]
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Meta", func(_ context.Context, cur *Current, req, rsp []byte) ([]byte, error) {
					cp := *cur
					cp.Context, cp.Status = maps.Clone(cur.Context), maps.Clone(cur.Status)
					got.Store(&cp)
					cur.ResponseContext = map[string]string{"rc": "1"}
					cur.ResponseStatus = map[string]string{"rs": "2"}
					return append(rsp, "meta"...), nil
				})
			}, m.opts...)
			c := dial(t, addr)
			req := request(77, pbServant, "Meta", []byte("x"))
			req.Context = map[string]string{"k": "v"}
			req.Status = map[string]string{"s": "t"}
			req.Timeout = 1234
			rsp := c.call(req)
			if rsp.Ret != codec.RetOK || string(rsp.Buffer) != "meta" ||
				!maps.Equal(rsp.Context, map[string]string{"rc": "1"}) || !maps.Equal(rsp.Status, map[string]string{"rs": "2"}) {
				t.Errorf("reply: got %+v", rsp)
			}
			cur := got.Load()
			if cur == nil {
				t.Fatal("handler did not run")
			}
			if cur.Servant != pbServant || cur.Func != "Meta" || cur.RequestID != 77 || cur.Timeout != 1234 ||
				cur.Version != codec.VersionTars || cur.PacketType != codec.PacketNormal ||
				!maps.Equal(cur.Context, req.Context) || !maps.Equal(cur.Status, req.Status) ||
				cur.RemoteAddr == nil || cur.RemoteAddr.String() != c.c.LocalAddr().String() {
				t.Errorf("Current: got %+v", cur)
			}
		})
	}
}

func TestOneway(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ran := make(chan string, 1)
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Note", func(_ context.Context, _ *Current, req, rsp []byte) ([]byte, error) {
					ran <- string(req)
					return append(rsp, "unsent"...), nil
				})
				mustHandle(t, s, pbServant, "Echo", echo)
			}, m.opts...)
			c := dial(t, addr)
			ow := request(1, pbServant, "Note", []byte("note"))
			ow.PacketType = codec.PacketOneway
			c.write(codec.AppendRequest(nil, ow))
			select {
			case got := <-ran:
				if got != "note" {
					t.Errorf("one-way handler got %q, want %q", got, "note")
				}
			case <-time.After(testTimeout):
				t.Fatal("one-way handler did not run")
			}
			// Nor do one-way requests to unknown functions get an answer.
			ow = request(2, pbServant, "Nope", nil)
			ow.PacketType = codec.PacketOneway
			c.write(codec.AppendRequest(nil, ow))
			c.expectSilence(100 * time.Millisecond)
			if rsp := c.call(request(3, pbServant, "Echo", []byte("after"))); string(rsp.Buffer) != "after" {
				t.Errorf("call after one-way: body %q", rsp.Buffer)
			}
		})
	}
}

func TestBadInputClosesConnection(t *testing.T) {
	const maxSize = 64 << 10
	lengthOnly := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	tests := []struct {
		name string
		data []byte
	}{
		{name: "length 0", data: lengthOnly(0)},
		{name: "length 3", data: lengthOnly(3)},
		// Above max with a head that is not a request's: not answered and skipped but closed (a
		// length above max alone is an incomplete frame: the server waits for its head).
		{name: "length above max, a head that is not TARS", data: append(lengthOnly(maxSize+1), bytes.Repeat([]byte{0xff}, 600)...)},
		{name: "length 0xffffffff", data: lengthOnly(0xffffffff)},
		{name: "garbage packet", data: append(lengthOnly(12), 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8)},
		{name: "empty packet", data: lengthOnly(4)},
		{name: "ascii", data: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{name: "required field missing", data: func() []byte {
			b, start := codec.BeginFrame(nil)
			e := codec.Encoder{Buf: b}
			e.WriteInt16(1, 1)
			e.WriteInt8(2, 0)
			codec.EndFrame(e.Buf, start)
			return e.Buf
		}()},
		{name: "bad frame after a good one", data: append(
			codec.AppendRequest(nil, request(1, pbServant, "Echo", []byte("ok"))), lengthOnly(2)...)},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
			}, append([]Option{WithMaxPacketSize(maxSize)}, m.opts...)...)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c := dial(t, addr)
					c.write(tt.data)
					if tt.name == "bad frame after a good one" && m.name == "inline" {
						// The good request is answered before the connection closes.
						if rsp := c.recv(); rsp.RequestID != 1 {
							t.Fatalf("got reply id %d, want 1", rsp.RequestID)
						}
					}
					if tt.name == "bad frame after a good one" && m.name == "workers" {
						// The reply may or may not beat the close; only the close is certain.
						if f, err := c.readFrame(testTimeout); err == nil {
							t.Logf("reply before close: %x", f)
						}
					}
					c.expectClosed()
					// The server lives on.
					if rsp := dial(t, addr).call(request(9, pbServant, "Echo", []byte("alive"))); string(rsp.Buffer) != "alive" {
						t.Fatalf("server after bad input: body %q", rsp.Buffer)
					}
				})
			}
		})
	}
}

// FuzzServerInput sends arbitrary bytes: the server must neither panic nor stop serving.
func FuzzServerInput(f *testing.F) {
	f.Add(codec.AppendRequest(nil, request(1, pbServant, "Echo", []byte("x"))))
	f.Add([]byte{0, 0, 0, 5, 0xff})
	f.Add([]byte{0, 0, 0, 4})
	_, addr := startServer(f, func(s *Server) {
		mustHandle(f, s, pbServant, "Echo", echo)
	})
	fuzzServing(f, dial(f, addr), pbServant, "Echo", func(t *testing.T) (*client, net.Conn) {
		c := dial(t, addr)
		return c, c.c
	})
}

func TestHandleProto(t *testing.T) {
	_, addr := startServer(t, func(s *Server) {
		err := HandleProto(s, pbServant, "Upper",
			func(_ context.Context, _ *Current, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				if req.GetValue() == "fail" {
					return nil, &Error{Code: 5, Desc: "asked to fail"}
				}
				return wrapperspb.String(strings.ToUpper(req.GetValue())), nil
			})
		if err != nil {
			t.Fatal(err)
		}
	})
	c := dial(t, addr)
	marshal := func(v string) []byte {
		b, err := proto.Marshal(wrapperspb.String(v))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	rsp := c.call(request(1, pbServant, "Upper", marshal("hello")))
	var out wrapperspb.StringValue
	if err := proto.Unmarshal(rsp.Buffer, &out); rsp.Ret != codec.RetOK || err != nil || out.GetValue() != "HELLO" {
		t.Errorf("Upper(hello): ret %d desc %q value %q (%v)", rsp.Ret, rsp.ResultDesc, out.GetValue(), err)
	}
	rsp = c.call(request(2, pbServant, "Upper", []byte{0x0a, 0x05, 'a'})) // truncated string
	if rsp.Ret != codec.RetServerDecode || rsp.ResultDesc == "" {
		t.Errorf("bad body: ret %d desc %q, want %d with the protobuf error", rsp.Ret, rsp.ResultDesc, codec.RetServerDecode)
	}
	rsp = c.call(request(3, pbServant, "Upper", marshal("fail")))
	if rsp.Ret != 5 || rsp.ResultDesc != "asked to fail" {
		t.Errorf("handler error: ret %d desc %q, want 5 %q", rsp.Ret, rsp.ResultDesc, "asked to fail")
	}
}
