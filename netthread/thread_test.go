package netthread

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/internal/call"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// echoRouter completes every call it is handed, on the loop, and counts them.
type echoRouter struct{ routed atomic.Int64 }

func (r *echoRouter) Route(c *call.Call)            { r.routed.Add(1); c.Complete(nil) }
func (r *echoRouter) Retry(c *call.Call, err error) { c.Complete(err) }

// TestSubmitRaceWithClose submits calls from many goroutines while the thread closes: every
// call is either refused by Submit (ErrClosed) or completes exactly once, and Close leaves no
// goroutine behind.
func TestSubmitRaceWithClose(t *testing.T) {
	th, err := New(Options{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	r := &echoRouter{}
	var accepted, refused, completed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := call.Get()
				c.Dest = r
				if err := th.Submit(c); err != nil {
					if !errors.Is(err, call.ErrClosed) {
						t.Errorf("Submit: %v", err)
					}
					refused.Add(1)
					call.Put(c)
					if refused.Load() > 100 {
						return
					}
					continue
				}
				accepted.Add(1)
				<-c.Done()
				completed.Add(1)
				call.Put(c)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	th.Close()
	th.Close() // twice is harmless
	close(stop)
	wg.Wait()
	if accepted.Load() != completed.Load() {
		t.Fatalf("accepted %d calls, %d completed", accepted.Load(), completed.Load())
	}
	if accepted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("accepted %d, refused %d: the test did not exercise both sides", accepted.Load(), refused.Load())
	}
}

// TestQueueFull checks that Submit refuses calls beyond QueueCap instead of queueing them.
func TestQueueFull(t *testing.T) {
	th, err := New(Options{QueueCap: 4, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer th.Close()
	th.queued.Add(4) // as if four calls were waiting for the loop
	c := call.Get()
	c.Dest = &echoRouter{}
	if err := th.Submit(c); !errors.Is(err, call.ErrQueueFull) {
		t.Fatalf("Submit on a full queue: %v, want ErrQueueFull", err)
	}
	th.queued.Add(-4)
	if err := th.Submit(c); err != nil {
		t.Fatalf("Submit after the queue drained: %v", err)
	}
	<-c.Done()
}
