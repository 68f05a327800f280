package communicator_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestKeepAliveSlowUploadLivesTLS is TestKeepAliveSlowUploadLives over an ssl endpoint: a 4 MiB
// request to a TLS server that reads it at about 512 KiB/s, with keep-alive-interval 2s, succeeds.
// On loopback the kernel takes most of the request at once, so the only progress is its send
// queue draining (SIOCOUTQ), which the keepalive sampled only when the connection's Fd() was not
// negative, never for TLS: the connection looked stalled, its ping and then its health probe
// expired, the connection was replaced and the call ended with ErrTimeout. The keepalive now
// samples the socket under the TLS records (tlsconn.LoopConn.SockFd). The server runs its
// handler on workers, so that its loop answers the ping while the 4 MiB request is decoded and
// its reply encoded (inline, under -race on a loaded machine, that held the loop past the ping's
// deadline: the call ended after 10 s in one make test beside two CPU hogs and a CI run). Its
// keepalive interval is two seconds, and the reader takes 512 KiB/s (the upload lasts about 8 s,
// four intervals, still far past the two in which a connection seen making no progress dies):
// with one second, the server's pong, sent once it has decrypted the 4 MiB ahead of the ping,
// came too late under -race in one make test beside two CPU hogs in three. The reply is a few
// bytes (the name's length): echoing the 4 MiB made the server encode and encrypt 4 MiB after
// the upload, on a loaded machine seconds in which nothing moved on the connection, and its
// health probe went unanswered once (a make test beside two hogs and other test runs).
func TestKeepAliveSlowUploadLivesTLS(t *testing.T) {
	const interval = 2 * time.Second
	p := newTLSPKI(t)
	g := startTLSGreeter(t, p, "tls", tlsServerOpt{pair: p.server, workers: true, short: true})
	r := startSlowReader(t, g.addr, 512<<10)
	c := tlsComm(t, tomlTLS(p.ca.File), func(c *conf.Config) {
		livenessTimeouts(c)
		c.SyncInvokeTimeout = 3 * live // the upload takes about 8s
		c.KeepAliveInterval = interval
	})
	sp := sslProxy(t, c, servant, r.addr())
	ctx := testCtx(t)
	name := strings.Repeat("u", 4<<20)
	start := time.Now()
	rsp := new(hellopb.HelloReply)
	if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: 1}, rsp); err != nil {
		msg := err.Error()
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		t.Fatalf("4 MiB upload over TLS at 512 KiB/s with keep-alive-interval %v: %s (after %v)", interval, msg, time.Since(start))
	}
	if want := strconv.Itoa(len(name)) + "@tls"; rsp.GetMessage() != want || rsp.GetSeq() != 1 {
		t.Fatalf("reply {%q, %d}, want {%q, 1}", rsp.GetMessage(), rsp.GetSeq(), want)
	}
	if got := r.accepts.Load(); got != 1 {
		t.Errorf("the server accepted %d connections, want 1: keepalive must not replace a connection that makes progress", got)
	}
}
