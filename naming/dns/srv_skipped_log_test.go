package dns_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/dns"
)

// TestSRVSkippedLoggedOnce: an SRV target without an address is skipped, and the warning that
// says so is logged once, not on each resolution (before, every interval logged it again, for
// every servant, for as long as the record stayed).
func TestSRVSkippedLoggedOnce(t *testing.T) {
	rs := startResponder(t)
	rs.setSRV("_tars._tcp.greeter.test",
		srvRecord{priority: 10, weight: 1, port: 9001, target: "a.greeter.test"},
		srvRecord{priority: 10, weight: 1, port: 9002, target: "gone.greeter.test"}, // no address
	)
	rs.setA("a.greeter.test", "127.0.0.1")
	core, logs := observer.New(zapcore.WarnLevel)
	// A short Timeout: a lookup in flight when the test ends (Go's resolver finishes it on a
	// goroutine of its own) meets the stopped responder and must end before goleak looks.
	src, err := dns.NewSRV("_tars._tcp.greeter.test", dns.Options{Resolver: rs.addr(), Interval: 20 * time.Millisecond, Timeout: 300 * time.Millisecond, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: "A.B.C"}, rec.push)
	defer stop()
	rec.waitFor(t, "the SRV list", lastIs("127.0.0.1:9001"))
	deadline := time.Now().Add(10 * time.Second)
	for rs.asked("_tars._tcp.greeter.test") < 10 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than ten resolutions within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := logs.FilterMessage("dns naming: SRV targets skipped").Len(); n != 1 {
		t.Fatalf("%d resolutions skipping the same target: %d warnings, want 1", rs.asked("_tars._tcp.greeter.test"), n)
	}
}
