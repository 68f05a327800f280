package communicator_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestCallAllocations: a sync call and an async call to a server in the same process (a protobuf
// servant, over loopback TCP) allocate no more than BenchmarkSyncCall and BenchmarkAsyncCall
// report (4 and 6 a call, client and server together), with stats on. Allocations per call are a
// promise of the performance rules ("never grow"); a benchmark shows them only to whoever runs
// it. Before this test, an errors.As on every frame read (client and server) added two a call
// and no test failed. It counts the whole process's allocations (testing.AllocsPerRun), so it
// is skipped under the race detector, whose sync.Pool drops items at random: make test-timing
// and a plain go test run it.
func TestCallAllocations(t *testing.T) {
	endToEnd(t)
	if raceEnabled {
		t.Skip("allocation counts mean nothing under -race (sync.Pool drops items at random)")
	}
	sp := benchSetupOn(t, "tcp", true)
	ctx := context.Background()
	req := &hellopb.HelloRequest{Name: "bench"}
	rsp := new(hellopb.HelloReply)
	call := func() {
		if err := sp.Invoke(ctx, "SayHello", req, rsp); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 { // connect, fill the pools
		call()
	}
	got := testing.AllocsPerRun(2000, call)
	t.Logf("sync %.3f", got)
	if got > 4.5 {
		t.Errorf("a sync call allocates %.2f times (client and server), want at most 4", got)
	}
	var wg sync.WaitGroup
	async := func() {
		wg.Add(1)
		if err := sp.AsyncInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), func(err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	for range 200 {
		async()
	}
	got = testing.AllocsPerRun(2000, async)
	t.Logf("async %.3f", got)
	if got > 6.5 {
		t.Errorf("an async call allocates %.2f times (client and server), want at most 6", got)
	}
}
