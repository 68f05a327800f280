package stat_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestHeadLimitsAsTarsCpp: a stat head's fields are trimmed and limited as TarsCpp's
// StatReport::trimAndLimitStr does: addresses (slaveIp, masterIp) to 50 bytes, names and
// functions to 127, without leading and trailing CR and tab. The hosts come from outside the
// program (a registry's answer, DNS, etcd: a Kubernetes pod's name), so do function names (a
// gateway's relayed calls).
//
// Before, slaveIp, masterIp and interfaceName were sent whole.
func TestHeadLimitsAsTarsCpp(t *testing.T) {
	impl, prx := start(t)
	const obj = "Hello.Server.GreeterObj"
	long := "greeter-7d9f8c6b5-x2x4q.greeter.prod.svc.cluster.local" // 54 bytes
	fn := "\t" + strings.Repeat("f", 200)
	var rec stats.Shared
	rec.Record(obj, fn, net.JoinHostPort(long, "18015"), stats.OK, 0, time.Millisecond)
	rec.Record(obj, "SayHello", net.JoinHostPort("2001:db8::1", "18015"), stats.OK, 0, time.Millisecond)
	r := stat.New(rec.Snapshot, prx, stat.Options{ModuleName: "Test.Client", FromClient: true, NodeName: strings.Repeat("n", 60)})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ips, fns := map[string]bool{}, map[string]bool{}
	for _, rep := range impl.take() {
		for h := range rep.msg {
			ips[h.SlaveIp], fns[h.InterfaceName] = true, true
			if len(h.MasterIp) != 50 {
				t.Errorf("masterIp of %d bytes, want the node name cut to 50", len(h.MasterIp))
			}
		}
	}
	if want := (map[string]bool{long[:50]: true, "2001:db8::1": true}); !equalSets(ips, want) {
		t.Errorf("slaveIps %v, want %v", ips, want)
	}
	if want := (map[string]bool{strings.Repeat("f", 127): true, "SayHello": true}); !equalSets(fns, want) {
		t.Errorf("interfaceNames %v, want %v", fns, want)
	}
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
