package objectproxy_test

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// rawPeer is a raw TARS peer on 127.0.0.1:0 driven by a script: answer gets every request
// (with a writer for its connection) and writes what it wants.
type rawPeer struct {
	ln   net.Listener
	mu   sync.Mutex
	got  map[string]int // requests received by function name
	cs   []net.Conn
	wg   sync.WaitGroup
	wmu  sync.Mutex
	ep   endpoint.Endpoint
	addr string
}

func startRawPeer(t *testing.T, answer func(s *rawPeer, c net.Conn, req *codec.RequestPacket)) *rawPeer {
	t.Helper()
	return startRawPeerOn(t, "127.0.0.1", answer)
}

// startRawPeerOn is startRawPeer on host (a loopback address: 127.0.0.0/8 is all loopback).
func startRawPeerOn(t *testing.T, host string, answer func(s *rawPeer, c net.Conn, req *codec.RequestPacket)) *rawPeer {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &rawPeer{ln: ln, got: map[string]int{}, addr: ln.Addr().String()}
	port := ln.Addr().(*net.TCPAddr).Port
	s.ep = endpoint.Endpoint{Proto: endpoint.TCP, Host: host, Port: port, Weight: -1}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			s.wg.Go(func() {
				fr := codec.NewFrameReader(c, 0)
				for {
					frame, err := fr.Next()
					if err != nil {
						return
					}
					var req codec.RequestPacket
					if codec.DecodeRequest(frame, &req) != nil {
						return
					}
					if req.FuncName == "tars_ping" {
						s.reply(c, &req, 0)
						continue
					}
					s.mu.Lock()
					s.got[req.FuncName]++
					s.mu.Unlock()
					answer(s, c, &req)
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.cs {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// reply writes the answer to req with return code ret.
func (s *rawPeer) reply(c net.Conn, req *codec.RequestPacket, ret int32) {
	b := codec.AppendResponse(nil, &codec.ResponsePacket{Version: req.Version, PacketType: codec.PacketNormal,
		RequestID: req.RequestID, MessageType: req.MessageType, Ret: ret})
	s.wmu.Lock()
	_, _ = c.Write(b)
	s.wmu.Unlock()
}

func (s *rawPeer) count(fn string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[fn]
}

// rawThread is a net thread with the given health policy and keepalive; Cleanup closes it.
func rawThread(t *testing.T, h netthread.Options) *netthread.Thread {
	t.Helper()
	if h.ConnectTimeout == 0 {
		h.ConnectTimeout = 5 * time.Second
	}
	th, err := netthread.New(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(th.Close)
	return th
}

func rawObj(t *testing.T, th *netthread.Thread, eps []endpoint.Endpoint, o objectproxy.Options) *objectproxy.ObjectProxy {
	t.Helper()
	op, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj", Endpoints: eps}, o)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// submit sends a call of fn through o (dest: o, or a Backup), hashed with code when hashed.
func submit(t *testing.T, th *netthread.Thread, dest call.Router, fn string, hashed bool, code uint64, timeout time.Duration) *call.Call {
	t.Helper()
	c := newCall(dest, fn, hashed, code, timeout)
	if err := th.Submit(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// newCall is the call submit submits, for a test that routes it itself (on the loop).
func newCall(dest call.Router, fn string, hashed bool, code uint64, timeout time.Duration) *call.Call {
	c := call.Get()
	c.Dest, c.Servant, c.Func = dest, "Test.Server.Obj", fn
	c.Start = call.Now()
	c.Deadline = c.Start + int64(timeout)
	c.Hashed, c.Hash = hashed, code
	c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{Version: codec.VersionTars,
		RequestID: codec.RequestIDUnassigned, ServantName: c.Servant, FuncName: fn, Timeout: int32(timeout / time.Millisecond)})
	return c
}

// wait waits for c (bounded by a liveness bound) and returns its endpoint, return code and error;
// c is recycled.
func wait(t *testing.T, c *call.Call) (addr string, ret int32, err error) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a call did not end within 20s")
	}
	addr, ret, err = c.Addr, c.Ret, c.Err
	call.Put(c)
	return addr, ret, err
}

// codeFor returns a hash code that the mod hash sends to e among eps (TarsCpp order).
func codeFor(eps []endpoint.Endpoint, e endpoint.Endpoint) uint64 {
	sorted := append([]endpoint.Endpoint(nil), eps...)
	endpoint.SortTars(sorted)
	for i, x := range sorted {
		if x == e {
			return uint64(i) + uint64(len(sorted))*1000
		}
	}
	panic("endpoint not in list: " + e.Host + ":" + strconv.Itoa(e.Port))
}

// startSleepyPeer starts a raw peer that answers a call of function "sleepN" after N ms (0 for
// any other name), without holding up the calls behind it.
func startSleepyPeer(t *testing.T) *rawPeer {
	t.Helper()
	return startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		ms, _ := strconv.Atoi(strings.TrimPrefix(req.FuncName, "sleep"))
		go func() {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			s.reply(c, req, 0)
		}()
	})
}
