package asyncproc

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestStressCloseWithStandIns (a guard: Close from callbacks while stand-ins run): random callbacks that wait for later callbacks (stand-ins), panic, and
// one or two that call Close; every Close returns, no callback runs after a Close from a
// callback returned, no goroutine is left (TestMain's goleak).
func TestStressCloseWithStandIns(t *testing.T) {
	for round := range 100 {
		workers := 1 + round%3
		p := New(Options{Workers: workers, QueueCap: 1 << 16})
		const n = 200
		dones := make([]chan struct{}, n)
		for i := range dones {
			dones[i] = make(chan struct{})
		}
		var closedAt atomic.Bool
		var late atomic.Int64
		closeRet := make(chan struct{}, 4)
		closerIdx := rand.IntN(n)
		closerIdx2 := rand.IntN(n)
		for i := 0; i < n; i++ {
			if err := p.Reserve(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i++ {
			i := i
			kind := rand.IntN(10)
			p.Deliver(&call.Call{Finish: func(*call.Call) {
				if closedAt.Load() {
					late.Add(1)
				}
				switch {
				case i == closerIdx || i == closerIdx2:
					close(dones[i]) // a closer's Close waits for every other callback
					p.Close()
					closedAt.Store(true)
					closeRet <- struct{}{}
				default:
					defer close(dones[i])
				}
				switch {
				case i == closerIdx || i == closerIdx2:
				case kind < 4 && i+1 < n:
					// wait for a later callback
					j := i + 1 + rand.IntN(n-i-1)
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					if err := p.Wait(ctx, dones[j]); err != nil {
						t.Errorf("round %d: callback %d waiting for %d: %v", round, i, j, err)
					}
					cancel()
				case kind == 5:
					defer func() { recover() }()
					panic("x")
				}
			}})
		}
		expect := 1
		if closerIdx2 != closerIdx {
			expect = 2
		}
		for k := 0; k < expect; k++ {
			select {
			case <-closeRet:
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: Close from a callback never returned (%d pending)", round, p.Pending())
			}
		}
		done := make(chan struct{})
		go func() { p.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: outside Close never returned", round)
		}
		if late.Load() != 0 {
			t.Fatalf("round %d: %d callbacks ran after a Close from a callback returned", round, late.Load())
		}
	}
}
