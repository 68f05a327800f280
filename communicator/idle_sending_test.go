package communicator_test

import (
	"testing"
	"time"
)

// TestIdleCloseWaitsForSentBytes: a connection that holds no call is closed once idle for its
// endpoint's timeout (-t), but not while bytes of calls that have already ended are still on
// their way: one-way calls end once handed on, and here one of 6 MiB (more than the sockets
// hold) waits in the large-frame writer while the peer reads nothing for many idle timeouts. Closing then
// would cut a frame reported sent (bytes already in the kernel's socket buffer still arrive after
// a close; those in the process do not). The peer, once it reads, finds every frame whole and in
// order.
func TestIdleCloseWaitsForSentBytes(t *testing.T) {
	e := startOrderedEcho(t)
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, e.endpoint()+" -t 30") // idle after 30 ms
	ctx := testCtx(t)

	// One frame larger than the sockets hold, for the large-frame writer: its call ends once
	// handed to it. (A call queued behind it would wait in the queue, which the idle close
	// already respects; small calls before it could let the connection idle-close before it is
	// sent, on a slow machine, and it would go on a new one.)
	sizes := []int{6 << 20}
	for i, n := range sizes {
		if err := sp.InvokeOnewayRaw(ctx, "echo", stampedBody(n, 0, uint32(i))); err != nil {
			t.Fatalf("one-way call %d (%d bytes): %v", i, n, err)
		}
	}
	// The call has ended: the connection holds none. It idles for many times its -t and several
	// chore ticks (100 ms apart) while its bytes wait for the peer.
	time.Sleep(600 * time.Millisecond)
	e.open()
	waitFor(t, "the peer reading every frame", func() bool {
		return e.frames.Load()+e.bad.Load() >= int64(len(sizes)) || t.Failed()
	})
	if got := e.frames.Load(); got != int64(len(sizes)) {
		t.Fatalf("the peer read %d whole frames, want %d (an idle close cut the large one)", got, len(sizes))
	}
}
