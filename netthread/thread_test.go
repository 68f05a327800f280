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
	"github.com/tarscomm/tarscomm/internal/closetest"
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
// goroutine behind. Each goroutine submits until Submit refuses it, so both sides are exercised
// however the goroutines are scheduled (the thread closes once calls were accepted).
func TestSubmitRaceWithClose(t *testing.T) {
	th, err := New(Options{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	r := &echoRouter{}
	const submitters = 8
	var accepted, refused, completed atomic.Int64
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for {
				c := call.Get()
				c.Dest = r
				if err := th.Submit(c); err != nil {
					if !errors.Is(err, call.ErrClosed) {
						t.Errorf("Submit: %v", err)
					}
					refused.Add(1)
					call.Put(c)
					return
				}
				accepted.Add(1)
				<-c.Done()
				completed.Add(1)
				call.Put(c)
			}
		})
	}
	for deadline := time.Now().Add(20 * time.Second); accepted.Load() < 1000; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d calls accepted in 20s\n%s", accepted.Load(), closetest.Stacks())
		}
	}
	th.Close()
	th.Close() // twice is harmless
	waitAll(t, &wg, "the submitters, after Close,")
	if accepted.Load() != completed.Load() {
		t.Fatalf("accepted %d calls, %d completed", accepted.Load(), completed.Load())
	}
	if refused.Load() != submitters {
		t.Fatalf("%d submitters refused after Close, want %d", refused.Load(), submitters)
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
