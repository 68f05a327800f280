package registry_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
)

// TestOutageLoggedOnceAndRecovery: a registry that fails the same way for
// a long outage (30 queries in a row answered -1 here, an hour at TarsCpp's 30 s retry), then
// answers. The other naming sources log such an outage once per distinct failure and an info
// line when it answers again (naming/dns's doc; etcd: "so that an etcd down for an hour is not a
// warning per servant every two seconds"). Before, the registry, the deployment's main source,
// wrote a warning per failed query per servant, and nothing when it answered again: an operator
// could not tell from the log that it recovered.
func TestOutageLoggedOnceAndRecovery(t *testing.T) {
	const fails = 30
	script := make([]answer, 0, fails+1)
	for range fails {
		script = append(script, refuse)
	}
	script = append(script, ok(1))
	qs := startQueryServer(t, script...)

	core, logs := observer.New(zapcore.InfoLevel)
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{
		FailRetry: 5 * time.Millisecond, SlowFailRetry: 5 * time.Millisecond, Refresh: hour, EmptyRetry: hour,
		Log: zap.New(core),
	})
	ev := newEvents()
	stop := r.WatchReporting(naming.Query{Object: "A.B.C"}, ev.push, ev.fail)
	defer stop()
	got, _ := ev.waitFor(t, fails+1)
	if got[fails] != "push tcp:1" {
		t.Fatalf("events %v, want %d failures then push tcp:1", got, fails)
	}
	time.Sleep(50 * time.Millisecond)

	warns := logs.FilterLevelExact(zapcore.WarnLevel).Len()
	var recovered []observer.LoggedEntry
	all := logs.All()
	for _, e := range all {
		if e.Level == zapcore.InfoLevel {
			recovered = append(recovered, e)
		}
	}
	if warns > 2 || len(recovered) != 1 {
		last := all[len(all)-1]
		t.Fatalf("%d identical registry failures then an answer: %d warnings (want 1, as dns/etcd: once per distinct failure), "+
			"%d info lines on recovery (want 1); last line: %s %q %v", fails, warns, len(recovered), last.Level, last.Message, last.ContextMap())
	}
}
