package objectproxy_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestBackupBeyond64: a servant with 70 live endpoints (real listeners), round robin. A backup
// request goes to another endpoint than the one its first call went to (Backup.Route,
// pickOther), at list index 64 and above too (markTried keeps i%64). Before, the Tried mask kept
// only indices below 64: an endpoint at index 64 or above was never marked, pickUntried returned
// the first call's own endpoint, which pickOther turned into "no other endpoint": the backup
// failed with ErrNoEndpoint although 69 other endpoints were up. The same sequence with the first call at index 10 (a control, which
// passes) sends the backup to index 11.
//
// The sequence is deterministic: the calls are sequential on one net thread, and round robin
// and pickUntried share the turn (View.rr), so after the first call and 69 other calls the
// turn's next endpoint is the first call's again.
func TestBackupBeyond64(t *testing.T) {
	for _, first := range []int{10, 65} {
		t.Run("first call at index "+strconv.Itoa(first), func(t *testing.T) {
			const n = 70
			eps := make([]endpoint.Endpoint, n)
			peers := map[endpoint.Endpoint]*rawPeer{}
			for i := range eps {
				p := startRawPeer(t, func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
					if req.FuncName == "fast" {
						s.reply(c, req, 0)
					} // "slow": never answered
				})
				eps[i] = p.ep
				peers[p.ep] = p
			}
			sorted := append([]endpoint.Endpoint(nil), eps...)
			endpoint.SortTars(sorted) // the list's order (TarsCpp's), which indices refer to
			th := rawThread(t, netthread.Options{})
			o := rawObj(t, th, eps, objectproxy.Options{Balancer: "roundrobin"})

			fast := func() string {
				addr, _, err := wait(t, submit(t, th, o, "fast", false, 0, 5*time.Second))
				if err != nil {
					t.Fatalf("fast call failed: %v", err)
				}
				return addr
			}
			// Turn the round robin until its next pick is index first.
			for k := 0; ; k++ {
				if k > 2*n {
					t.Fatalf("round robin never reached %s", sorted[first-1].Addr())
				}
				if fast() == peers[sorted[first-1]].addr {
					break
				}
			}
			b := o.NewBackup()
			primary := submit(t, th, b, "slow", false, 0, 2*time.Second)
			target := peers[sorted[first]]
			deadline := time.Now().Add(5 * time.Second)
			for target.count("slow") == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the first call did not reach index %d (%s) within 5s", first, target.addr)
				}
				time.Sleep(time.Millisecond)
			}
			for range n - 1 {
				fast()
			}
			addr, _, err := wait(t, submit(t, th, b, "fast", false, 0, 5*time.Second))
			if err != nil || addr == target.addr {
				t.Errorf("backup of a call sent to list index %d (%s) of %d live endpoints: went to %q, error %v; "+
					"want it sent to another endpoint and answered", first, target.addr, n, addr, err)
			}
			if _, _, err := wait(t, primary); err == nil {
				t.Errorf("the first call (never answered) succeeded")
			}
		})
	}
}
