package communicator_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestTLSLargeConcurrentEcho runs many large calls at once over one TLS connection, of sizes
// that split frames across TLS records and reads at every offset, and checks every byte of
// every reply: on both sides, the rest of a large frame is decrypted straight into the frame's
// buffer (tlsconn.LoopConn.Fill), which must put each byte where it belongs and never write a
// buffer once its frame is done.
func TestTLSLargeConcurrentEcho(t *testing.T) {
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "tls", tlsServerOpt{pair: p.server})
	c := tlsComm(t, tomlTLS(p.ca.File), livenessTimeouts)
	sp := sslProxy(t, c, servant, g.addr)
	ctx := testCtx(t)
	sizes := []int{64<<10 - 7, 64<<10 + 100, 100_000, 16<<10 + 1, 300_001, 1<<20 + 5}
	const callers, calls = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	for w := range callers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range calls {
				n := sizes[(w+i)%len(sizes)]
				b := make([]byte, n)
				for j := range b {
					b[j] = 'a' + byte(r.IntN(26))
				}
				seq := uint64(w*calls + i)
				from, err := sayHello(ctx, sp, string(b), seq)
				if err == nil && from != "tls" {
					err = fmt.Errorf("answered by %q", from)
				}
				if err != nil {
					msg := err.Error() // quotes the reply: keep its start
					if len(msg) > 200 {
						msg = msg[:200] + "..."
					}
					errs <- fmt.Errorf("caller %d call %d (%d bytes): %s", w, i, n, msg)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
