package communicator_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// TestAttribSweep: for each way one call can end on one endpoint, the caller's error, the
// interceptor's CallInfo at End, the Stats row (servant, function, endpoint) and result, and the
// endpoint's counters agree, and the call is counted once. A guard of the paths that agree.
func TestAttribSweep(t *testing.T) {
	never := func(*codec.RequestPacket, net.Conn) bool { return true }
	closer := func(*codec.RequestPacket, net.Conn) bool { return false }
	type path struct {
		name    string
		start   func(t *testing.T) string // host:port
		call    func(t *testing.T, sp *servantproxy.ServantProxy) error
		family  error  // errors.Is target; nil: success
		code    int32  // server error code (ServerError)
		result  string // Stats result; "" for none (one-way sent)
		check   func(t *testing.T, e stats.Endpoint)
		counted uint64
	}
	syncCall := func(t *testing.T, sp *servantproxy.ServantProxy) error {
		return sp.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), servantproxy.WithTimeout(300*time.Millisecond))
	}
	paths := []path{
		{name: "success", start: func(t *testing.T) string { return startGreeter(t, "a", serverOpt{}).addr },
			call: syncCall, result: "ok", counted: 1,
			check: func(t *testing.T, e stats.Endpoint) {
				if e.Sent != 1 || e.Replies != 1 {
					t.Errorf("endpoint Sent %d Replies %d, want 1 1", e.Sent, e.Replies)
				}
			}},
		{name: "server-error", start: func(t *testing.T) string {
			return errServer(t, func() error { return &server.Error{Code: -7, Desc: "busy"} })
		}, call: syncCall, code: -7, result: "server_error", counted: 1,
			check: func(t *testing.T, e stats.Endpoint) {
				if e.Sent != 1 || e.Replies != 1 {
					t.Errorf("endpoint Sent %d Replies %d, want 1 1", e.Sent, e.Replies)
				}
			}},
		{name: "timeout", start: func(t *testing.T) string { return startRawServer(t, never).addr() },
			call: syncCall, family: communicator.ErrTimeout, result: "timeout", counted: 1,
			check: func(t *testing.T, e stats.Endpoint) {
				// The timeout takes the endpoint out, and its health probe (a ping, which this peer
				// leaves unanswered too) may be sent and expire before the counters are read on a
				// busy machine: at least the call, no reply.
				if e.Sent < 1 || e.Timeouts < 1 || e.Replies != 0 {
					t.Errorf("endpoint Sent %d Timeouts %d Replies %d, want at least 1 1, and 0", e.Sent, e.Timeouts, e.Replies)
				}
			}},
		{name: "connection-lost", start: func(t *testing.T) string { return startRawServer(t, closer).addr() },
			call: syncCall, family: communicator.ErrConnection, result: "connection", counted: 1,
			check: func(t *testing.T, e stats.Endpoint) {
				if e.Sent != 1 || e.ConnFails+e.ConnLosses != 1 {
					t.Errorf("endpoint Sent %d ConnFails %d ConnLosses %d, want Sent 1 and one of them 1", e.Sent, e.ConnFails, e.ConnLosses)
				}
			}},
		{name: "refused", start: func(t *testing.T) string {
			ln := listenLoopback(t)
			a := ln.Addr().String()
			_ = ln.Close()
			return a
		}, call: syncCall, family: communicator.ErrConnection, result: "connection", counted: 1,
			check: func(t *testing.T, e stats.Endpoint) {
				if e.ConnFails != 1 {
					t.Errorf("endpoint ConnFails %d, want 1", e.ConnFails)
				}
			}},
		{name: "cancelled-sync", start: func(t *testing.T) string { return startRawServer(t, never).addr() },
			call: func(t *testing.T, sp *servantproxy.ServantProxy) error {
				ctx, cancel := context.WithCancel(testCtx(t))
				time.AfterFunc(50*time.Millisecond, cancel)
				return sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), servantproxy.WithTimeout(300*time.Millisecond))
			}, family: context.Canceled, result: "cancelled", counted: 1},
		{name: "cancelled-async", start: func(t *testing.T) string { return startRawServer(t, never).addr() },
			call: func(t *testing.T, sp *servantproxy.ServantProxy) error {
				ctx, cancel := context.WithCancel(testCtx(t))
				defer cancel()
				done := make(chan error, 1)
				if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x"}, new(hellopb.HelloReply), func(err error) { done <- err }, servantproxy.WithTimeout(300*time.Millisecond)); err != nil {
					return err
				}
				time.AfterFunc(50*time.Millisecond, cancel)
				return waitErr(done, 5*time.Second, "async callback")
			}, family: context.Canceled, result: "cancelled", counted: 1},
		{name: "oneway-sent", start: func(t *testing.T) string { return startGreeter(t, "a", serverOpt{}).addr },
			call: func(t *testing.T, sp *servantproxy.ServantProxy) error {
				return sp.InvokeOneway(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "x"})
			}, counted: 0,
			check: func(t *testing.T, e stats.Endpoint) {
				if e.Sent != 1 {
					t.Errorf("endpoint Sent %d, want 1", e.Sent)
				}
			}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			addr := p.start(t)
			ic := &attribIcpt{}
			comm := newCommWith(t, faultConf(nil), communicator.WithInterceptor(ic.icpt()))
			sp := proxyToAddrs(t, comm, tcpEndpoint(addr))
			err := p.call(t, sp)
			switch {
			case p.family == nil && p.code == 0:
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
			case p.code != 0:
				var se *communicator.ServerError
				if !errors.As(err, &se) || se.Code != p.code {
					t.Fatalf("err = %v, want ServerError %d", err, p.code)
				}
			default:
				if !errors.Is(err, p.family) {
					t.Fatalf("err = %v, want %v", err, p.family)
				}
				if got := attribEndpointOf(err); got != addr {
					t.Errorf("CallError names endpoint %q, want %q (%v)", got, addr, err)
				}
			}
			ends := ic.all()
			if len(ends) != 1 {
				t.Fatalf("interceptor End ran %d times, want 1", len(ends))
			}
			if ends[0].Endpoint != addr || ends[0].Ret != p.code || (ends[0].Err == nil) != (err == nil) {
				t.Errorf("interceptor End = %+v, want endpoint %s, ret %d, err %v", ends[0], addr, p.code, err)
			}
			var rows map[string]map[string]uint64
			ok := func() bool {
				snap := comm.Stats()
				rows = attribRows(snap, "SayHello")
				return attribTotal(snap, "SayHello") == p.counted
			}
			deadline := time.Now().Add(3 * time.Second)
			for !ok() && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !ok() {
				t.Fatalf("Stats counts: %s; want %d call(s)", attribRowsString(rows), p.counted)
			}
			if p.result != "" && rows[addr][p.result] != 1 {
				t.Errorf("Stats rows: %s; want one %s under %s", attribRowsString(rows), p.result, addr)
			}
			if p.check != nil {
				e, found := attribEndpointStats(comm.Stats(), addr)
				if !found {
					t.Fatalf("no Stats().Endpoints entry for %s", addr)
				}
				p.check(t, e)
			}
			if t.Failed() {
				t.Logf("err: %v", err)
			}
		})
	}
}
