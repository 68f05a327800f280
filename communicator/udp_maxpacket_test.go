package communicator_test

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestUDPReplyAboveMaxPacketSize: a udp endpoint keeps the client's max-packet-size ("the largest
// response frame accepted"), as tcp does: an 8000-byte reply to a Communicator whose
// max-packet-size is 1024 fails its call at once with ErrDecode naming the sizes, and the socket
// goes on. It used to be accepted (only datagram.Check ran: one frame of at most 65507 bytes),
// then dropped as a bad datagram, its call waiting for its deadline (30 s here).
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
	got, err := sp.InvokeRaw(ctx, "f", []byte("big"), servantproxy.WithTimeout(time.Minute))
	if !errors.Is(err, communicator.ErrDecode) || errors.Is(err, communicator.ErrTimeout) ||
		!strings.Contains(err.Error(), "exceeds max-packet-size 1024") {
		t.Fatalf("an 8000-byte reply to a client with max-packet-size 1024: %d bytes, %v; want ErrDecode naming the limit", len(got), err)
	}
	if got, err := sp.InvokeRaw(ctx, "f", []byte("after")); err != nil || string(got) != "after" {
		t.Fatalf("the call after it: %q, %v", got, err)
	}
	var bad, replies uint64
	for _, e := range c.Stats().Endpoints {
		bad += e.BadDatagrams
		replies += e.Replies
	}
	if bad != 0 || replies != 3 {
		t.Errorf("client counted %d bad datagrams and %d replies, want 0 and 3", bad, replies)
	}
}
