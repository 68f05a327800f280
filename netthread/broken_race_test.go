package netthread

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestAnchorLostEndsEveryCall: when the anchor socket closes (anchorLost), every call Submit
// accepted still ends. A call pushed by a Submit that passed the broken check just before
// anchorLost drained the queue stayed there, with no drain ever to come, until Close.
func TestAnchorLostEndsEveryCall(t *testing.T) {
	for i := range 400 {
		th, err := New(Options{Log: zap.NewNop(), NoDirect: true})
		if err != nil {
			t.Fatal(err)
		}
		r := &echoRouter{}
		var wg sync.WaitGroup
		var stranded atomic.Int64
		var mu sync.Mutex
		var lost []*call.Call
		start := make(chan struct{})
		for range 6 {
			wg.Go(func() {
				<-start
				cs := make([]*call.Call, 0, 32)
				for {
					cs = cs[:0]
					refused := false
					for range 32 {
						c := call.Get()
						c.Dest = r
						if err := th.Submit(c); err != nil {
							if !errors.Is(err, call.ErrClosed) {
								t.Errorf("Submit: %v", err)
							}
							call.Put(c)
							refused = true
							break
						}
						cs = append(cs, c)
					}
					for _, c := range cs {
						select {
						case <-c.Done():
							call.Put(c)
						case <-time.After(5 * time.Second):
							stranded.Add(1)
							mu.Lock()
							lost = append(lost, c)
							mu.Unlock()
						}
					}
					if refused {
						return
					}
				}
			})
		}
		close(start)
		time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
		_ = syscall.Shutdown(th.anchorFD, syscall.SHUT_WR)
		waitAll(t, &wg, fmt.Sprintf("iteration %d", i))
		queued := th.queued.Load()
		th.Close()
		if n := stranded.Load(); n > 0 {
			for _, c := range lost {
				<-c.Done() // Close ends it: it was left in the queue
				t.Logf("stranded call ended by Close with %v", c.Err)
			}
			t.Fatalf("iteration %d: %d accepted calls never ended (5 s) after the wakeup socket closed; %d still counted as queued", i, n, queued)
		}
	}
}
