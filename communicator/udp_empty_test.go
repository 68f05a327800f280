package communicator_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
)

// TestUDPEmptyDatagram: the peer of a udp endpoint answers the first request with an empty
// datagram, then with its reply. gnet reads a client's datagram socket as a stream and takes an
// empty datagram for its end, so the socket closes: the call waiting on it fails with
// ErrConnection saying so (it said "ICMP port unreachable"), the datagram is counted in
// BadDatagrams, and a later call, on a new socket, gets its reply.
func TestUDPEmptyDatagram(t *testing.T) {
	endToEnd(t)
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		readDatagrams(peer, func(req *codec.RequestPacket, from net.Addr) {
			if n.Add(1) == 1 {
				_, _ = peer.WriteTo(nil, from) // an empty datagram first
			}
			rsp := codec.ResponsePacket{Version: req.Version, RequestID: req.RequestID, Buffer: req.Buffer}
			_, _ = peer.WriteTo(codec.AppendResponse(nil, &rsp), from)
		})
	}()
	t.Cleanup(func() { _ = peer.Close(); <-done })

	c := newComm(t, func(cfg *conf.Config) { livenessTimeouts(cfg); cfg.NetThread = 1 })
	sp := udpProxy(t, c, fmt.Sprintf("udp -h 127.0.0.1 -p %d", peer.LocalAddr().(*net.UDPAddr).Port))
	ctx := testCtx(t)
	_, err = sp.InvokeRaw(ctx, "f", []byte("first"))
	if !errors.Is(err, communicator.ErrConnection) || !strings.Contains(err.Error(), "empty datagram") {
		t.Fatalf("the call answered by an empty datagram: %v; want ErrConnection naming the empty datagram", err)
	}
	var bad uint64
	for _, e := range c.Stats().Endpoints {
		bad += e.BadDatagrams
	}
	if bad != 1 {
		t.Errorf("client counted %d bad datagrams, want 1", bad)
	}
	waitFor(t, "a later call gets its reply", func() bool {
		got, err := sp.InvokeRaw(ctx, "f", []byte("later"))
		return err == nil && string(got) == "later"
	})
}
