package netthread

import (
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/objectproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestSnapshotReadsTheClock: Snapshot reports an endpoint StateBackoff while retryAt is after
// the loop's clock (adapterproxy.EndpointStats), so takeSnapshot reads the clock first: an idle
// loop turns only for its chores (every 100 ms), and the clock of its last turn can be that old.
// Before, a snapshot taken 80 ms after a refused connect (backoff 25 ms at most after one
// failure) said the endpoint was still backing off, 9 of 24 times (found by a review of the
// idle ticker; Stats, the debug page and Prometheus showed it). Health rules are off
// (Options.Health zero): no probe dials again meanwhile.
func TestSnapshotReadsTheClock(t *testing.T) {
	th, err := New(Options{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(th.Close)
	const trials = 24
	stale := 0
	for i := range trials {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		obj := "Test.Review.Clock" + strconv.Itoa(i) + "Obj"
		target, err := endpoint.Parse(obj + "@tcp -h 127.0.0.1 -p " + strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		o, err := th.NewObjectProxy(target, objectproxy.Options{Balancer: "roundrobin"})
		if err != nil {
			t.Fatal(err)
		}
		c := call.Get()
		c.Dest, c.Servant, c.Func = o, obj, "Hold"
		c.Start = call.Now()
		c.Deadline = c.Start + int64(10*time.Second)
		c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
			Version: codec.VersionTars, RequestID: codec.RequestIDUnassigned,
			ServantName: obj, FuncName: "Hold", Timeout: 10000,
		})
		if err := th.Submit(c); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a call to a closed port had not ended after 10 s")
		}
		failed := time.Now()
		if !errors.Is(c.Err, call.ErrConnection) {
			t.Fatalf("trial %d: a call to a closed port ended with %v, want ErrConnection", i, c.Err)
		}
		call.Put(c)
		time.Sleep(time.Until(failed.Add(80 * time.Millisecond)))
		s, err := th.Snapshot(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range s.Endpoints {
			if e.Servant != obj {
				continue
			}
			if e.ConnFails != 1 {
				t.Fatalf("trial %d: %d failed connects, want 1", i, e.ConnFails)
			}
			if e.State == stats.StateBackoff {
				stale++
			}
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d snapshots taken 80 ms after a refused connect (backoff <= 25 ms) said StateBackoff: takeSnapshot uses the idle loop's clock of its last turn", stale, trials)
	}
}
