package communicator_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestUDPReplyAboveMaxPacketSize: a udp endpoint keeps the client's max-packet-size ("the largest
// response frame accepted"), as tcp does: an 8000-byte reply to a Communicator whose
// max-packet-size is 1024 is dropped and counted as a bad datagram, and its call times out. It
// used to be accepted (only datagram.Check ran: one frame of at most 65507 bytes).
func TestUDPReplyAboveMaxPacketSize(t *testing.T) {
	endToEnd(t)
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		readDatagrams(peer, func(req *codec.RequestPacket, from net.Addr) {
			body := req.Buffer
			if string(body) == "big" {
				body = bytes.Repeat([]byte{'b'}, 8000)
			}
			rsp := codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: body}
			_, _ = peer.WriteTo(codec.AppendResponse(nil, &rsp), from)
		})
	}()
	t.Cleanup(func() { _ = peer.Close(); <-done })

	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1; cfg.MaxPacketSize = 1024 })
	sp := udpProxy(t, c, udpEndpoint(peer.LocalAddr().(*net.UDPAddr)))
	ctx := testCtx(t)
	if got, err := sp.InvokeRaw(ctx, "f", []byte("small")); err != nil || string(got) != "small" {
		t.Fatalf("small reply: %q, %v", got, err)
	}
	got, err := sp.InvokeRaw(ctx, "f", []byte("big"), servantproxy.WithTimeout(500*time.Millisecond))
	if err == nil {
		t.Fatalf("a reply frame carrying %d bytes of body was accepted by a client with max-packet-size 1024", len(got))
	}
	var bad uint64
	for _, e := range c.Stats().Endpoints {
		bad += e.BadDatagrams
	}
	if bad != 1 {
		t.Errorf("client counted %d bad datagrams, want 1 (the oversize reply)", bad)
	}
}
