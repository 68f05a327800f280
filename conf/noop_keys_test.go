package conf_test

import (
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
)

// TestEndpointCacheWithoutRegistryRefused: endpoint-cache keeps "the registry's last
// good answer per object" (full.toml); only the registry source reads it (naming/registry via
// naming.Env.EndpointCache; naming/file, naming/dns and etcd ignore it). With a naming file, a
// dns:// or file:// naming source, or no naming source at all, the file is never written nor
// read, so a client whose owner counted on starting from it when the source is down starts from
// nothing. Parse accepted each of these (a review of the configuration keys).
func TestEndpointCacheWithoutRegistryRefused(t *testing.T) {
	for _, body := range []string{
		"endpoint-cache = \"/var/tmp/tars.cache\"\nnaming-file = \"/etc/tars/naming.txt\"",
		"endpoint-cache = \"/var/tmp/tars.cache\"\nnaming = \"dns://greeter.svc:9000\"",
		"endpoint-cache = \"/var/tmp/tars.cache\"\nnaming = \"file:///etc/tars/naming.txt\"",
		"endpoint-cache = \"/var/tmp/tars.cache\"",
	} {
		if _, err := conf.Parse([]byte(body + "\n")); err == nil || !strings.Contains(err.Error(), "endpoint-cache") {
			t.Errorf("%q: Parse error %v; want a refusal naming endpoint-cache (no registry reads or writes it)", body, err)
		}
	}
	// With the registry it is what it says.
	if _, err := conf.Parse([]byte("endpoint-cache = \"/var/tmp/tars.cache\"\nlocator = \"tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p 17890\"\n")); err != nil {
		t.Fatalf("endpoint-cache with locator: %v", err)
	}
}

// TestBackupKeysWithoutBackupRequestRefused: backup-budget caps backup requests and
// idempotent lists the functions that may have one (servantproxy.MarkIdempotent: "It has an
// effect only when the servant has backup-request set"); with backup-request left at "0s" (off,
// the default) there is no backup for either to apply to (servantproxy.newBackup returns nil),
// as there is no retry for retry-budget without retries, which Parse refuses. Parse accepted them
// (a review of the configuration keys); with backup-request they are what they say.
func TestBackupKeysWithoutBackupRequestRefused(t *testing.T) {
	for _, tc := range []struct{ body, key string }{
		{"backup-budget = 0.5", "backup-budget"},
		{"idempotent = [\"Get\"]", "idempotent"},
	} {
		_, err := conf.Parse([]byte("[servant.\"App.S.Obj\"]\n" + tc.body + "\n"))
		key := `servant."App.S.Obj".` + tc.key
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "backup-request") {
			t.Errorf("%q: Parse error %v; want a refusal naming %s and backup-request (without it the key does nothing)", tc.body, err, key)
		}
		if _, err := conf.Parse([]byte("[servant.\"App.S.Obj\"]\nbackup-request = \"20ms\"\n" + tc.body + "\n")); err != nil {
			t.Errorf("%q with backup-request: %v", tc.body, err)
		}
	}
}

// naming.ParseTarget lowercases the scheme ("DNS://..." is the dns source), but the
// endpoint-cache check compared it as written: the same config that is refused with
// "dns://" was accepted with "DNS://" or "Etcd://", though its cache is never read either (a
// review of the change).
func TestEndpointCacheSchemeCase(t *testing.T) {
	for _, src := range []string{"DNS://greeter.svc:9000", "Etcd://127.0.0.1:2379/tars", "File:///etc/tars/naming.txt"} {
		body := "endpoint-cache = \"/var/tmp/tars.cache\"\nnaming = \"" + src + "\"\n"
		if _, err := conf.Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), "endpoint-cache") {
			t.Errorf("naming = %q: Parse error %v; want the refusal lowercase %q gets", src, err, strings.ToLower(src))
		}
	}
}
