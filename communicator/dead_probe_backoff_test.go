package communicator_test

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// refusingAddrs returns n distinct 127.0.0.1 ports on which nothing listens: each was bound by
// a listener of this test, all held at once (so the ports differ), then closed, so a connect to
// it is refused.
func refusingAddrs(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("cannot hold %d listeners: %v", n, err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	return out
}

// TestDeadEndpointProbesBackOff: a servant of 500 endpoints, every one refusing connections,
// each called once (it fails with ErrConnection and leaves rotation, max-connect-fail = 1), then
// the application makes no call. The client probes an inactive endpoint itself, every 250 ms
// for two seconds, then each probe twice as long after the one before, up to try-interval (here
// a minute): probes due about 2.5, 3.5, 5.5 and 9.5 s after an endpoint went out, so from 4 s to
// 7 s after the calls at most one per endpoint falls, and the client's CPU stays low.
//
// Before, every inactive endpoint was dialled every 250 ms, forever, whatever try-interval said:
// about twelve dials per endpoint in that window, tens of thousands of connects a second and
// thousands of dial goroutines from a client making no call, with 10,000 dead endpoints.
func TestDeadEndpointProbesBackOff(t *testing.T) {
	endToEnd(t)
	const n = 500
	addrs := refusingAddrs(t, n)
	eps := make([]string, n)
	for i, a := range addrs {
		eps[i] = tcpEndpoint(a)
	}
	comm := newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		c.SyncInvokeTimeout = 5 * time.Second
		c.Health.TryInterval = time.Minute
	}, communicator.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel))))
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+strings.Join(eps, ":"), &sp); err != nil {
		t.Fatal(err)
	}
	dials := func() (total uint64, tried int) {
		for _, e := range comm.Stats().Endpoints {
			if e.Servant == servant {
				total += e.ConnFails
				if e.ConnFails > 0 {
					tried++
				}
			}
		}
		return total, tried
	}

	// Every endpoint is tried once (round robin over the active ones), from a few callers.
	ctx := testCtx(t)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= n; i = next.Add(1) {
				_, _ = sayHello(ctx, &sp, "x", uint64(i))
			}
		})
	}
	wg.Wait()
	called := time.Now()
	d0, tried := dials()
	t.Logf("%d calls made: %d failed dials, %d endpoints tried", n, d0, tried)

	// Idle: the application makes no call. The window from 4 s to 7 s after the calls.
	time.Sleep(time.Until(called.Add(4 * time.Second)))
	d1, _ := dials()
	cpu0, w0 := cpuTime(t), time.Now()
	time.Sleep(time.Until(called.Add(7 * time.Second)))
	d2, _ := dials()
	idle, cpu := d2-d1, cpuTime(t)-cpu0
	t.Logf("idle from 4 s to 7 s after the calls: %d dials, CPU %v", idle, cpu.Round(time.Millisecond))
	// One probe each is due in the window; the endpoints tried last in the calls (which took
	// their time under -race) may be a probe behind: at most two each.
	if idle > 2*n {
		t.Errorf("an idle Communicator dialled its %d refusing endpoints %d times from 4 s to 7 s after their calls: "+
			"%.1f dials per endpoint per second; want the probes backed off (at most 2 each in the window)",
			n, idle, float64(idle)/float64(n)/time.Since(w0).Seconds())
	}
}

// cpuTime returns the CPU time (user + system) this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
