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

// TestResolverDownLoggedOnce: the resolver goes down (its UDP port closed: every
// question meets "connection refused") and stays down. The package doc promises that a failure
// is logged "a warning, once per distinct failure". It is the same failure every time, but the
// Source compared the error's text, and Go's text for it names the socket's local address,
// "read udp 127.0.0.1:<ephemeral port>->...: connection refused", a new port on every question:
// so every resolution logged a warning again, for every servant, every interval, for as long as
// the resolver was down. Now the local addresses are not part of what is compared (failureKey).
func TestResolverDownLoggedOnce(t *testing.T) {
	rs := startResponder(t)
	rs.setA("greeter.test", "127.0.0.1")
	core, logs := observer.New(zapcore.WarnLevel)
	src, err := dns.New("greeter.test:9000", dns.Options{Resolver: rs.addr(), Interval: 20 * time.Millisecond,
		Timeout: time.Second, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.WatchReporting(naming.Query{Object: "A.B.C"}, rec.push, rec.fail)
	defer stop()
	rec.waitFor(t, "the first list", lastIs("127.0.0.1:9000"))

	rs.stop() // the resolver is down from now on
	rec.waitFor(t, "ten failed resolutions", func(_ []naming.List, fs []error) bool { return len(fs) >= 10 })
	_, fs := rec.snapshot()
	warned := logs.FilterMessage("dns naming: resolution failed, keeping the last list")
	if n := warned.Len(); n != 1 {
		var texts []string
		for i, e := range warned.All() {
			if i < 3 {
				texts = append(texts, e.ContextMap()["error"].(string))
			}
		}
		t.Fatalf("the resolver down, %d failed resolutions: %d warnings logged, want 1 (once per distinct failure); the first: %q",
			len(fs), n, texts)
	}
}
