package objectproxy_test

import (
	"math"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestPeakEWMAFasterReplyLowersLatency, over a real server: an endpoint answers
// one call in 1 s, then, after a pause, one in 300 ms. The second reply is faster than the
// endpoint's latency as the balancer reads it at that moment, so the latency may at most stay
// where it was (a sample below the current value is blended in; one above replaces it). Before,
// it rose, above both the value before the call and the call's whole elapsed time: observe
// blended the sample into the stored, undecayed peak (adapterproxy/latency.go), not into the
// value the pickers read.
func TestPeakEWMAFasterReplyLowersLatency(t *testing.T) {
	b := startSleepyPeer(t)
	th := rawThread(t, netthread.Options{})
	o := rawObj(t, th, []endpoint.Endpoint{b.ep}, objectproxy.Options{Balancer: "p2c"})
	loadAt := func(now int64) (lat float64) {
		runOn(th, func() { lat, _ = o.Adapters()[0].Load(now) })
		return lat
	}

	if _, ret, err := wait(t, submit(t, th, o, "sleep1000", false, 0, 10*time.Second)); err != nil || ret != 0 {
		t.Fatalf("slow call: ret %d, err %v", ret, err)
	}
	time.Sleep(150 * time.Millisecond)
	const fast = 300 * time.Millisecond
	start := call.Now()
	// The latency the balancer reads at the earliest moment the fast reply can be observed: the
	// current value then is at most this.
	before := loadAt(start + int64(fast))
	c := submit(t, th, o, "sleep300", false, 0, 10*time.Second)
	if _, ret, err := wait(t, c); err != nil || ret != 0 {
		t.Fatalf("fast call: ret %d, err %v", ret, err)
	}
	elapsed := float64(call.Now() - start) // at least the reply's own sample
	after := loadAt(0)                     // the value at the last sample, undecayed
	if limit := math.Max(before, elapsed); after > limit {
		t.Errorf("latency read %v when the %v reply could arrive, the call took at most %v, yet after it the latency is %v; "+
			"want at most %v (the larger of the two)",
			time.Duration(before), fast, time.Duration(elapsed), time.Duration(after), time.Duration(limit))
	}
}
