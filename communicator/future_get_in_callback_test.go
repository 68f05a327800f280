package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// TestFutureGetInCallback: an async callback (or a future's OnDone) that makes a
// future call and waits for it with Get, as one writes a two-step call chain. Every async worker
// busy so (asyncthread of them; asyncthread=1, or the default 3 with three such callbacks at
// once) gets the inner call's reply: a Get on an async worker runs the waiting callbacks
// (asyncproc.Pool.Wait, through future.MakeHelped). Before, it deadlocked: the inner future is
// completed only by an async worker, and all of them waited in Get; not even the inner call's
// own deadline freed them, and Communicator.Close would have waited for the callbacks forever.
func TestFutureGetInCallback(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint("asyncthread=", workers), func(t *testing.T) {
			g := startGreeter(t, "a", serverOpt{})
			comm := newComm(t, func(c *conf.Config) {
				c.AsyncThread = workers
				c.AsyncInvokeTimeout = time.Second // the inner call's own deadline: it does not help
			})
			sp := proxyTo(t, comm, g)
			ctx := testCtx(t)

			var (
				entered atomic.Int64
				all     = make(chan struct{})
				once    sync.Once
				results = make(chan error, workers)
			)
			for i := range workers {
				err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "outer", Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) {
					if err != nil {
						results <- fmt.Errorf("outer call: %w", err)
						return
					}
					// Wait until every worker is inside such a callback (test scaffolding, bounded).
					if entered.Add(1) == int64(workers) {
						once.Do(func() { close(all) })
					}
					select {
					case <-all:
					case <-time.After(live):
						results <- errors.New("not all outer callbacks ran at once")
						return
					}
					getCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "inner", Seq: uint64(100 + i)}, new(hellopb.HelloReply))
					r, err := f.Get(getCtx)
					if err != nil {
						results <- fmt.Errorf("inner future's Get in an async callback: %w", err)
						return
					}
					if _, err := checkReply(r.(*hellopb.HelloReply), "inner", uint64(100+i)); err != nil {
						results <- err
						return
					}
					results <- nil
				})
				if err != nil {
					t.Fatalf("AsyncInvoke: %v", err)
				}
			}
			for range workers {
				if err := waitErr(results, live, "outer callback"); err != nil {
					t.Errorf("%v; want the inner reply (the server answers at once): with every async worker "+
						"waiting in Get, nobody completes the future", err)
				}
			}
		})
	}
}
