package objectproxy_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestConnectionsLatencyIsOfSampledConnections: with two connections per endpoint, one call
// that took 200 ms on one of them gives the endpoint a latency of at least 200 ms, the balancer's
// view of what a call there costs. Before, the endpoint's latency was the mean over its
// connections, the one that had no reply yet counted as 0: it read half of it (a first slow reply
// showed at 1/N, and p2c kept sending to a slow endpoint with many connections).
func TestConnectionsLatencyIsOfSampledConnections(t *testing.T) {
	b := startSleepyPeer(t)
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{b.ep}, objectproxy.Options{Balancer: "p2c", Connections: 2})

	const slow = 200 * time.Millisecond
	if _, ret, err := wait(t, submit(t, th, o, "sleep200", false, 0, 10*time.Second)); err != nil || ret != 0 {
		t.Fatalf("slow call: ret %d, err %v", ret, err)
	}
	var lat float64
	runOn(th, func() { lat, _ = o.EndpointLoad(0, 0) })
	if time.Duration(lat) < slow {
		t.Errorf("after its only reply took at least %v, the endpoint's latency over 2 connections is %v; want at least %v",
			slow, time.Duration(lat), slow)
	}
}
