package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestOversizedRequestHeadSplit: a request above WithMaxPacketSize whose first read holds its
// 4-byte length but not yet its ids (TCP delivers a stream: here the client writes the frame's
// first 7 bytes, then the rest, as a slow or segmented link does) is answered -1 and skipped, as
// one whose head came whole is; the connection and the next request go on. Before, the head
// was read from the first read's 7 bytes, could not be, and the connection closed (found by a
// review of the change that made oversized frames skipped).
func TestOversizedRequestHeadSplit(t *testing.T) {
	const limit = 4096
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) },
				append([]Option{WithMaxPacketSize(limit)}, mode.opts...)...)
			c := dial(t, addr)
			big := codec.AppendRequest(nil, request(2, pbServant, "Echo", bytes.Repeat([]byte("x"), 3*limit)))
			// Request 1 and the first 7 bytes of request 2 (its length and 3 bytes of its ids).
			c.write(append(codec.AppendRequest(nil, request(1, pbServant, "Echo", []byte("one"))), big[:7]...))
			if rsp := c.recv(); rsp.RequestID != 1 || rsp.Ret != codec.RetOK {
				t.Fatalf("request 1: id %d ret %d", rsp.RequestID, rsp.Ret)
			}
			time.Sleep(100 * time.Millisecond) // the server has read the 7 bytes
			c.write(append(big[7:], codec.AppendRequest(nil, request(3, pbServant, "Echo", []byte("three")))...))
			f, err := c.readFrame(testTimeout)
			if err != nil {
				t.Fatalf("oversized request 2 split after its length: read %v; want it answered -1 and the connection kept", err)
			}
			rsp := new(codec.ResponsePacket)
			if err := codec.DecodeResponse(f, rsp); err != nil || rsp.RequestID != 2 || rsp.Ret != codec.RetServerDecode ||
				!strings.Contains(rsp.ResultDesc, "exceeds max-packet-size") {
				t.Fatalf("oversized request 2: id %d ret %d desc %q (%v); want id 2 answered -1", rsp.RequestID, rsp.Ret, rsp.ResultDesc, err)
			}
			if rsp := c.recv(); rsp.RequestID != 3 || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "three" {
				t.Fatalf("request 3: id %d ret %d body %q", rsp.RequestID, rsp.Ret, rsp.Buffer)
			}
		})
	}
}

// TestOversizedRequestAtReadBoundary: the same with one write, as any client writes its queued
// requests: request 1 is sized so that gnet's first read (64 KiB) ends a few bytes into the
// oversized request 2. The server answers request 1, refuses 2 with -1 and answers 3. Before,
// 9 of 10 connections closed.
func TestOversizedRequestAtReadBoundary(t *testing.T) {
	const limit = 100 << 10
	_, addr := startServer(t, func(s *Server) { mustHandle(t, s, pbServant, "Echo", echo) }, WithMaxPacketSize(limit))
	first := codec.AppendRequest(nil, request(1, pbServant, "Echo", nil))
	pad := 65536 - 6 - len(first) // request 1 ends 6 bytes before 64 KiB
	first = codec.AppendRequest(nil, request(1, pbServant, "Echo", bytes.Repeat([]byte("p"), pad)))
	for len(first) != 65536-6 { // the body's length prefix may have grown
		pad -= len(first) - (65536 - 6)
		first = codec.AppendRequest(nil, request(1, pbServant, "Echo", bytes.Repeat([]byte("p"), pad)))
	}
	big := codec.AppendRequest(nil, request(2, pbServant, "Echo", bytes.Repeat([]byte("x"), 2*limit)))
	last := codec.AppendRequest(nil, request(3, pbServant, "Echo", []byte("three")))
	lost := 0
	const tries = 10
	for range tries {
		c := dial(t, addr)
		c.write(append(append(append([]byte(nil), first...), big...), last...))
		got := map[int32]int32{}
		for len(got) < 3 {
			f, err := c.readFrame(testTimeout)
			if err != nil {
				break
			}
			rsp := new(codec.ResponsePacket)
			if codec.DecodeResponse(f, rsp) != nil {
				break
			}
			got[rsp.RequestID] = rsp.Ret
		}
		if len(got) < 3 || got[2] != codec.RetServerDecode {
			lost++
			t.Logf("replies %v: the connection closed", got)
		}
		_ = c.c.Close()
	}
	if lost > 0 {
		t.Errorf("%d of %d connections closed instead of answering the oversized request -1 and going on", lost, tries)
	}
}
