package communicator_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestParkedBurstMemoryGivenBack: calls made before a servant's first endpoint list are parked on its
// ObjectProxy (one per net thread), and all leave when the list comes. What a burst of them took
// must be given back then, as the other per-burst structures give theirs back (a connection's
// send queue drops an array above 4096 calls, the async overflow list "lets a burst's memory
// go", a large pending table found empty is "made small again"): the ObjectProxy lives as long
// as the Communicator, and nothing parks on it again once it has a list. A client whose
// registry answered late at start-up, with 150000 async calls made meanwhile, must not keep
// memory for them for good. Before, the emptied map was kept: about 4.9 MiB more after the burst.
func TestParkedBurstMemoryGivenBack(t *testing.T) {
	const n = 150000
	g := startGreeter(t, "a", serverOpt{})
	src := &pushSource{ready: make(chan struct{})}
	cfg := conf.Default()
	cfg.AsyncInvokeTimeout = 3 * time.Minute // a liveness bound: the burst takes its time under -race on a busy machine
	cfg.AsyncQueueCap = 1 << 20              // every callback may be due at once
	c, err := communicator.New(cfg, communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, c) })
	sp, err := c.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background() // no context.AfterFunc per call: nothing of the caller's own grows
	base := heapInUseAfterGC()

	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	wg.Add(n)
	for i := range n {
		err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "x", Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			}
			wg.Done()
		})
		if err != nil {
			t.Fatalf("AsyncInvoke %d: %v", i, err)
		}
	}
	select {
	case <-src.ready: // the first parked call started the naming source
	case <-time.After(10 * time.Second):
		t.Fatal("the naming source was not asked for the servant's list within 10s of the first call")
	}
	src.send(g)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the parked calls did not all complete within 3 minutes of the list")
	}
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d parked calls failed (the first: %v); want all answered once the list came", f, n, *firstErr.Load())
	}
	time.Sleep(300 * time.Millisecond) // the loops finish their turn
	after := heapInUseAfterGC()
	grown := int64(after) - int64(base)
	t.Logf("heap in use: %d KiB before the burst, %d KiB once its %d calls completed", base>>10, after>>10, n)
	if grown > 2<<20 {
		t.Fatalf("once the %d calls parked before the first list had all completed, the client holds %d KiB more heap than "+
			"before them (the ObjectProxy's map of parked calls keeps the size of the burst: emptied, never released); "+
			"want it given back (under 2 MiB more)", n, grown>>10)
	}
}

// heapInUseAfterGC is the heap in use once the collector has run enough for sync.Pools to be empty.
func heapInUseAfterGC() uint64 {
	var ms runtime.MemStats
	for range 4 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
