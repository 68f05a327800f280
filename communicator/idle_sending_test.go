package communicator_test

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// trickleReader is a raw TARS peer that reads each connection at a slow, steady pace (chunk bytes
// every pause) and checks the one-way request frames it gets: each whole and stamped
// (checkStamped). A frame cut by a close shows as a short read: cut counts it.
type trickleReader struct {
	*rawServer
	frames atomic.Int64 // whole frames read
	cut    atomic.Int64 // connections that ended inside a frame
}

func startTrickleReader(t *testing.T, chunk int, pause time.Duration) *trickleReader {
	t.Helper()
	endToEnd(t)
	r := new(trickleReader)
	// A small receive buffer, so that the client's socket fills and its bytes wait in the
	// process (the large-frame writer) rather than in the kernel.
	ln := listenSmallRcvBuf(t)
	r.rawServer = serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		buf := make([]byte, 0, 8<<20)
		var req codec.RequestPacket
		for {
			if len(buf) >= 4 {
				n := int(buf[0])<<24 | int(buf[1])<<16 | int(buf[2])<<8 | int(buf[3])
				if n >= 4 && len(buf) >= n {
					if err := codec.DecodeRequest(buf[:n], &req); err != nil {
						t.Errorf("slow reader: undecodable frame: %v", err)
						return
					}
					if _, _, err := checkStamped(req.Buffer); err != nil {
						t.Errorf("slow reader: frame %d: %v", r.frames.Load(), err)
						return
					}
					r.frames.Add(1)
					buf = append(buf[:0], buf[n:]...)
					continue
				}
			}
			time.Sleep(pause)
			k, err := c.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
			buf = buf[:len(buf)+k]
			if err != nil {
				if len(buf) > 0 || !errors.Is(err, io.EOF) {
					r.cut.Add(1)
				}
				return
			}
		}
	})
	return r
}

// TestIdleCloseWaitsForSentBytes: a connection that holds no call is closed once idle for its
// endpoint's timeout (-t), but not while bytes of calls that have already ended are still moving
// to the socket: a one-way call ends once handed on, and here one of 6 MiB (more than the
// sockets hold) is written by the large-frame writer to a peer that reads it slowly, in steady
// small reads, for far longer than the idle timeout. Closing then would cut a frame reported
// sent. The peer gets it whole, and no connection ends inside it.
func TestIdleCloseWaitsForSentBytes(t *testing.T) {
	r := startTrickleReader(t, 32<<10, 5*time.Millisecond) // ~6 MB/s: about a second for the frame
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, r.endpoint()+" -t 150") // idle after 150 ms
	ctx := testCtx(t)
	if err := sp.InvokeOnewayRaw(ctx, "echo", stampedBody(6<<20, 0, 0)); err != nil {
		t.Fatalf("one-way call: %v", err)
	}
	waitFor(t, "the peer reading the frame, or the connection ending", func() bool {
		return r.frames.Load()+r.cut.Load() > 0 || t.Failed()
	})
	if r.cut.Load() != 0 || r.frames.Load() != 1 {
		t.Fatalf("the peer read %d whole frames and saw %d connections end inside one: an idle close cut the frame", r.frames.Load(), r.cut.Load())
	}
}

// TestIdleCloseGivesUpOnStalledBytes: bytes of ended calls hold an idle close only while they
// move. A peer that reads nothing at all leaves a 6 MiB one-way frame stuck in the large-frame
// writer; once it has not moved for the idle timeout the connection is closed like any idle one
// (the frame is lost with the peer that would not read it), rather than held forever with its
// writer goroutine.
func TestIdleCloseGivesUpOnStalledBytes(t *testing.T) {
	e := startOrderedEcho(t) // reads nothing until opened, and is not opened before the close
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, e.endpoint()+" -t 100")
	if err := sp.InvokeOnewayRaw(testCtx(t), "echo", stampedBody(6<<20, 0, 0)); err != nil {
		t.Fatalf("one-way call: %v", err)
	}
	waitFor(t, "the idle close of the connection whose bytes stopped moving", func() bool {
		for _, st := range comm.Stats().Endpoints {
			if st.ConnLosses > 0 {
				return true
			}
		}
		return false
	})
}
