package communicator_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestLostConnectionWarns: package logging's doc ("Quiet by default") lists what
// the default warn level reports: "a failed connect, a lost connection, a registry that does not
// answer, ..."; communicator.WithLogger says the same ("warnings (a failed connect, a lost
// connection) are rate-limited per endpoint"). A connection reset under five calls in flight
// (a server that crashed, a middlebox reset): the calls fail with ErrConnection, and the log at
// warn level and above should name the endpoint. The AdapterProxy logs a lost connection at
// debug only (adapterproxy/conn.go, closed), so an operator at the default level sees nothing.
//
// Before, the loss was logged at debug level only.
func TestLostConnectionWarns(t *testing.T) {
	endToEnd(t)
	core, logs := observer.New(zap.DebugLevel)
	ep := startFaultEP(t, "a")
	c := newCommWith(t, faultConf(nil), communicator.WithLogger(zap.New(core)))
	sp := proxyToEPs(t, c, ep)
	ctx := testCtx(t)
	if _, err := sayHello(ctx, sp, "warm", 0); err != nil {
		t.Fatal(err)
	}
	ep.g.delay.Store(int64(5 * time.Second))
	base := ep.g.calls.Load()
	var errcs []<-chan error
	for i := range 5 {
		errc, err := asyncHello(t, ctx, sp, "x", uint64(i+1), servantproxy.WithTimeout(8*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		errcs = append(errcs, errc)
	}
	eventually(t, 5*time.Second, "the five calls reach the server", func() bool { return ep.g.calls.Load()-base == 5 })
	if n := ep.p.Cut(); n != 1 {
		t.Fatalf("Cut reset %d connections, want 1", n)
	}
	for i, errc := range errcs {
		if err := waitErr(errc, 5*time.Second, "a call on the reset connection"); !errors.Is(err, communicator.ErrConnection) {
			t.Fatalf("call %d on the reset connection: %v, want ErrConnection", i+1, err)
		}
	}
	var debug, warn []string
	for _, e := range logs.All() {
		if e.ContextMap()["endpoint"] != ep.p.Addr() {
			continue
		}
		line := e.Level.String() + " " + e.Message
		if e.Level >= zapcore.WarnLevel {
			warn = append(warn, line)
		} else {
			debug = append(debug, line)
		}
	}
	if len(warn) == 0 {
		t.Errorf("a connection to %s was lost under 5 calls (all failed with ErrConnection), and nothing was logged at warn level or above for it; "+
			"documented: a lost connection is reported at the default (warn) level. Logged below warn: %s", ep.p.Addr(), strings.Join(debug, "; "))
	}
}
