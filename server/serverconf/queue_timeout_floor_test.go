package serverconf_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestQueueTimeoutFloor: TarsCpp reads an adapter's <queuetimeout> through
// TC_EpollServer::BindAdapter::setQueueTimeout, which raises any value below MIN_QUEUE_TIMEOUT
// (3000 ms) to 3000 ms. With queuetimeout = 1000 a request that waited 2 s for the adapter's one
// handler thread (its client's own timeout is 60 s) is therefore still run by a TarsCpp server,
// and by this one now. Before, this server answered it -6 (server queue timeout) without running
// it.
func TestQueueTimeoutFloor(t *testing.T) {
	// The second waits 2 s: above 1000 ms, below TarsCpp's floor of 3000 ms.
	rsps, _, _ := queueBehindHeld(t, "App.S.FloorObj", 1000, 2*time.Second)
	for i, r := range rsps {
		if r.RequestID != int32(i+1) || r.Ret != codec.RetOK {
			t.Errorf("reply id %d: ret %d (%q), want id %d ret 0: queuetimeout = 1000 is 3000 ms for TarsCpp "+
				"(setQueueTimeout's MIN_QUEUE_TIMEOUT), and the request waited 2 s", r.RequestID, r.Ret, r.ResultDesc, i+1)
		}
	}
}
