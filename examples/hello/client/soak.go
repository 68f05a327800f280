package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
)

// soak keeps calling for d from callers goroutines, half sync and half async, whatever the
// servers do, and accounts for every call: started, completed (by outcome), and how late the
// latest one ended after its deadline. It is meant to run behind a faulty proxy (stalls,
// resets, garbage, restarts): errors are expected and counted; what must hold is that every
// call completes exactly once, none later than its deadline plus one check interval (plus
// scheduling slack), and that no goroutine is left over. It returns an error if that fails.
func soak(prx *hellopb.GreeterProxy, comm *communicator.Communicator, callers int, d time.Duration) error {
	cfg := comm.Config()
	sv := cfg.ForServant("Hello.Server.GreeterObj")
	syncTO, asyncTO := sv.SyncInvokeTimeout, sv.AsyncInvokeTimeout
	allowed := cfg.TimeoutCheckInterval + 100*time.Millisecond // slack for a busy machine

	var (
		started, completed, ok, timeouts, conn, full, server, other, twice atomic.Int64
		latest                                                             atomic.Int64 // ns past the deadline
	)
	account := func(begun time.Time, deadline time.Duration, err error) {
		completed.Add(1)
		if late := time.Since(begun) - deadline; late > time.Duration(latest.Load()) {
			latest.Store(int64(late))
		}
		var se *communicator.ServerError
		switch {
		case err == nil:
			ok.Add(1)
		case errors.Is(err, communicator.ErrTimeout):
			timeouts.Add(1)
		case errors.Is(err, communicator.ErrConnection):
			conn.Add(1)
		case errors.Is(err, communicator.ErrQueueFull):
			full.Add(1)
		case errors.As(err, &se):
			server.Add(1)
		default:
			other.Add(1)
		}
	}

	goroutinesBefore := runtime.NumGoroutine()
	stop := time.Now().Add(d)
	var wg, pending sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			window := make(chan struct{}, 8)
			for i := 0; time.Now().Before(stop); i++ {
				seq := uint64(g)<<32 | uint64(i)
				req := &hellopb.HelloRequest{Name: "soak", Seq: seq}
				started.Add(1)
				begun := time.Now()
				if i%2 == 0 {
					rsp, err := prx.SayHello(context.Background(), req)
					if err == nil && rsp.GetSeq() != seq {
						err = fmt.Errorf("reply for seq %d answered seq %d", seq, rsp.GetSeq())
					}
					account(begun, syncTO, err)
					continue
				}
				window <- struct{}{}
				pending.Add(1)
				var once atomic.Bool
				err := prx.AsyncSayHello(context.Background(), req, func(rsp *hellopb.HelloReply, err error) {
					if !once.CompareAndSwap(false, true) {
						twice.Add(1)
						return
					}
					if err == nil && rsp.GetSeq() != seq {
						err = fmt.Errorf("reply for seq %d answered seq %d", seq, rsp.GetSeq())
					}
					account(begun, asyncTO, err)
					<-window
					pending.Done()
				})
				if err != nil { // not sent: completed now, the callback will not run
					account(begun, asyncTO, err)
					<-window
					pending.Done()
				}
			}
		})
	}
	wg.Wait()
	waited := make(chan struct{})
	go func() { pending.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(max(syncTO, asyncTO) + time.Second):
	}
	late := time.Duration(latest.Load())
	fmt.Printf("soak: %v, %d callers: started=%d completed=%d ok=%d timeout=%d connection=%d queuefull=%d server=%d other=%d twice=%d latest_past_deadline=%v goroutines=%d->%d\n",
		d, callers, started.Load(), completed.Load(), ok.Load(), timeouts.Load(), conn.Load(), full.Load(),
		server.Load(), other.Load(), twice.Load(), late.Round(time.Millisecond), goroutinesBefore, runtime.NumGoroutine())
	switch {
	case started.Load() != completed.Load():
		return fmt.Errorf("soak: %d calls started, %d completed", started.Load(), completed.Load())
	case twice.Load() > 0:
		return fmt.Errorf("soak: %d callbacks ran twice", twice.Load())
	case late > allowed:
		return fmt.Errorf("soak: a call ended %v after its deadline (allowed %v)", late, allowed)
	case other.Load() > 0:
		return fmt.Errorf("soak: %d calls failed with an unexpected error", other.Load())
	}
	return nil
}
