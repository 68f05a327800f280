package serverconf_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

// buildFromFile runs what a program serving from a file runs, conf.Parse then serverconf.New
// (starting nothing), and returns the first error.
func buildFromFile(t *testing.T, toml string) error {
	t.Helper()
	cfg, err := conf.Parse([]byte(toml))
	if err != nil {
		return err
	}
	_, err = serverconf.New(cfg.Server)
	return err
}

// TestQueueCapWithoutThreadsRefused (accepted in silence before): queuecap bounds the queue in front of an adapter's
// handler goroutines; with threads = 0 (the default) handlers run inline on the event loops and
// there is no queue, so "queuecap = 500" does nothing. A file that sets it expects a bound on
// its queued requests: it must be refused with an error naming the key and saying it needs
// threads > 0.
func TestQueueCapWithoutThreadsRefused(t *testing.T) {
	err := buildFromFile(t, `
[[server.adapter]]
servant = "App.S.InlineObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
queuecap = 500
`)
	const key = "server.adapter[0].queuecap"
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "threads") {
		t.Fatalf("queuecap = 500 on an adapter without threads: error %v; want a refusal naming %s and threads "+
			"(without handler goroutines there is no queue: the key would do nothing)", err, key)
	}
}

// TestQueueTimeoutWithoutThreadsRefused (accepted in silence before): the same for queuetimeout, which bounds the wait in
// that queue (server.WithQueueTimeout: "Inline mode has no queue"). With threads = 0 a request
// never waits in a queue and is never answered -6, whatever the key says.
func TestQueueTimeoutWithoutThreadsRefused(t *testing.T) {
	err := buildFromFile(t, `
[[server.adapter]]
servant = "App.S.InlineObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
queuetimeout = 200
`)
	const key = "server.adapter[0].queuetimeout"
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "threads") {
		t.Fatalf("queuetimeout = 200 on an adapter without threads: error %v; want a refusal naming %s and threads "+
			"(without handler goroutines no request waits in a queue: the key would do nothing)", err, key)
	}
}

// TestConnectionKeysOnUDPRefused (accepted in silence before): maxconns, backpacketlimit, backpacketmin and maxbacklog
// limit an adapter's connections; a udp adapter has none (server's UDP: "there are no
// connections"), so each does nothing there. serverconf already refuses TLS keys, -e 1 and
// accesskey on udp for that reason, naming them; these must be refused too, each naming its key.
func TestConnectionKeysOnUDPRefused(t *testing.T) {
	for _, kv := range []string{"maxconns = 3", "backpacketlimit = 4096", "backpacketmin = 10", "maxbacklog = 65536"} {
		t.Run(strings.Fields(kv)[0], func(t *testing.T) {
			err := buildFromFile(t, `
[[server.adapter]]
servant = "App.S.UDPObj"
endpoint = "udp -h 127.0.0.1 -p 0"
`+kv+"\n")
			key := "server.adapter[0]." + strings.Fields(kv)[0]
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "udp") {
				t.Fatalf("%s on a udp adapter: error %v; want a refusal naming %s and udp "+
					"(a udp adapter has no connections: the key would do nothing)", kv, err, key)
			}
		})
	}
}

// TestBackPacketMinWithRuleOffRefused: backpacketmin is the bytes a slow reader must
// take per window under TarsCpp's rule, which backpacketlimit = -1 turns off
// (server.WithBacklog(0, min): "limit <= 0 turns it off"); the file's backpacketmin then does
// nothing, and serverconf accepted it, though it refuses queuecap without threads and the connection
// keys on udp for doing nothing (accepted in silence before; a review of the configuration keys).
func TestBackPacketMinWithRuleOffRefused(t *testing.T) {
	err := buildFromFile(t, `
[[server.adapter]]
servant = "App.S.Obj"
endpoint = "tcp -h 127.0.0.1 -p 0"
backpacketlimit = -1
backpacketmin = 4096
`)
	const key = "server.adapter[0].backpacketmin"
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "backpacketlimit") {
		t.Fatalf("backpacketmin = 4096 with backpacketlimit = -1 (the rule off): error %v; want a refusal naming %s and backpacketlimit", err, key)
	}
}

// TestServerTLSWithoutSSLAdapterRefused: [server] cert, key, ca and verifyclient = true
// ("clients must present a certificate signed by ca", full.toml) with only tcp adapters: every
// adapter serves plain TCP to any client, and New accepted the file. The same keys in the
// adapter's own table are refused ("TLS keys are set on the adapter but its endpoint is tcp").
// A client without any certificate was served here (accepted in silence before; a review of the
// configuration keys: the owner believed mutual TLS enforced).
func TestServerTLSWithoutSSLAdapterRefused(t *testing.T) {
	f := newTLSFiles(t)
	text := fmt.Sprintf(`
[server]
cert = %q
key = %q
ca = %q
verifyclient = true
[[server.adapter]]
servant = "App.S.PlainObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
`, f.server.Cert, f.server.Key, f.ca.File)
	if err := buildFromFile(t, text); err == nil || !strings.Contains(err.Error(), "verifyclient") {
		srvs := start(t, text, func(s *serverconf.Servers) { echo(t, s, "App.S.PlainObj") })
		got, cerr := call(t, client(t, ""), srvs, "App.S.PlainObj", "no cert")
		t.Fatalf("[server] verifyclient = true, cert, key and ca with only a tcp adapter: error %v; want a refusal naming "+
			"the [server] TLS keys (no adapter is ssl: they do nothing); a client with no certificate got %q, %v", err, got, cerr)
	}
}
