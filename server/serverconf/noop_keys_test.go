package serverconf_test

import (
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
