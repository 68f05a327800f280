package communicator_test

import (
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestAttribRetrySecondEndpoint: with retries = 1, calls that meet a refused endpoint first
// are retried on the healthy one: each is one call, counted once, as a success of the endpoint
// that answered, which the interceptor names too; the refused endpoint has no call row (its
// ConnFails counts the refused connect).
func TestAttribRetrySecondEndpoint(t *testing.T) {
	ln := listenLoopback(t)
	bad := ln.Addr().String()
	_ = ln.Close()
	g := startGreeter(t, "b", serverOpt{})
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", Retries: 1}}
	}), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, tcpEndpoint(bad), g.endpoint())
	ctx := testCtx(t)
	const n = 6
	for i := range n {
		if _, err := sayHello(ctx, sp, "r", uint64(i)); err != nil {
			t.Fatalf("call %d: %v (want a retry on %s)", i, err, g.addr)
		}
	}
	for i, e := range ic.all() {
		if e.Endpoint != g.addr || e.Err != nil {
			t.Errorf("interceptor End %d = %+v, want endpoint %s, no error", i, e, g.addr)
		}
	}
	snap := comm.Stats()
	rows := attribRows(snap, "SayHello")
	if attribTotal(snap, "SayHello") != n || rows[g.addr]["ok"] != n {
		t.Errorf("Stats rows: %s; want %d ok calls under %s and nothing else", attribRowsString(rows), n, g.addr)
	}
	if e, _ := attribEndpointStats(snap, bad); e.ConnFails == 0 {
		t.Errorf("the refused endpoint's ConnFails = 0: no call met it (the test did not retry)")
	}
}

// TestAttribBackupWon: sync calls whose backup request wins are one call each: Stats counts
// a success under the endpoint that answered, and the interceptor's CallInfo.Endpoint names that
// endpoint (the reply's), not the one the first request went to.
func TestAttribBackupWon(t *testing.T) {
	silent := startRawServer(t, func(*codec.RequestPacket, net.Conn) bool { return true })
	g := startGreeter(t, "b", serverOpt{})
	ic := &attribIcpt{}
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: 5 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}), communicator.WithInterceptor(ic.icpt()))
	sp := proxyToAddrs(t, comm, silent.endpoint(), g.endpoint())
	ctx := testCtx(t)
	const n = 4
	for i := range n {
		if _, err := sayHello(ctx, sp, "k", uint64(i), withTimeout(2*time.Second)...); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if sp.BackupStats().Won == 0 {
		t.Fatalf("no backup won (%+v)", sp.BackupStats())
	}
	for i, e := range ic.all() {
		if e.Endpoint != g.addr || e.Err != nil {
			t.Errorf("interceptor End %d = %+v, want the endpoint that answered, %s", i, e, g.addr)
		}
	}
	// The first requests, which the backups beat, end by their deadline: counted as the silent
	// endpoint's timeouts, not as calls. (Not "until nothing is pending": the timeouts make the
	// silent endpoint inactive, and its health probes, unanswered too, then keep one pending.)
	var rows map[string]map[string]uint64
	waitFor(t, "the dropped first requests to end", func() bool {
		s := comm.Stats()
		rows = attribRows(s, "SayHello")
		e, _ := attribEndpointStats(s, silent.addr())
		return e.Timeouts >= n
	})
	if attribTotal(comm.Stats(), "SayHello") != n || rows[g.addr]["ok"] != n {
		t.Errorf("Stats rows: %s; want %d ok calls under %s and nothing else", attribRowsString(rows), n, g.addr)
	}
}
