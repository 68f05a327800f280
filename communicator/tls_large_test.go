package communicator_test

import (
	"strings"
	"testing"
)

// TestTLSLargeEcho sends 1 MiB and 8 MiB requests over TLS and checks their replies: large
// frames must never take the direct socket paths of plain TCP (inbound's direct reads, the
// large-frame writer), which would read or write past the encryption.
func TestTLSLargeEcho(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "tls", tlsServerOpt{pair: p.server})
	// The outcome is the replies: the call timeout is a liveness bound (8 MiB over TLS under
	// -race on a busy machine passed the default 3s in CI: late, not lost).
	c := tlsComm(t, tomlTLS(p.ca.File), livenessTimeouts)
	sp := sslProxy(t, c, servant, g.addr)
	ctx := testCtx(t)
	for i, n := range []int{1 << 20, 8 << 20} {
		name := strings.Repeat("tls-large-", n/10)
		from, err := sayHello(ctx, sp, name, uint64(i))
		if err != nil {
			t.Fatalf("%d bytes over TLS: %v", len(name), err)
		}
		if from != "tls" {
			t.Fatalf("%d bytes over TLS: answered by %q", len(name), from)
		}
	}
}
