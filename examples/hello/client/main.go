// Command hello-client calls the example Greeter through a tarscomm Communicator configured from
// a TOML file: sync calls from many goroutines, then async calls whose callbacks run on the
// Communicator's async workers. It checks every reply and exits non-zero on any failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

func main() {
	config := flag.String("config", "examples/hello/client.toml", "TOML configuration file")
	obj := flag.String("proxy", "Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015 -t 60000", "TARS proxy string of the greeter")
	callers := flag.Int("callers", 16, "goroutines making calls")
	calls := flag.Int("calls", 1000, "calls per goroutine, for sync and for async")
	flag.Parse()
	if err := run(*config, *obj, *callers, *calls); err != nil {
		log.Fatalf("hello-client: %v", err)
	}
}

func run(path, obj string, callers, calls int) error {
	cfg, err := conf.Load(path)
	if err != nil {
		return err
	}
	comm, err := communicator.New(cfg)
	if err != nil {
		return err
	}
	defer comm.Close()

	var prx servantproxy.ServantProxy
	if err := comm.StringToProxy(obj, &prx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// One call first, so that the output shows a reply.
	rsp := new(hellopb.HelloReply)
	if err := prx.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "tars", Seq: 1}, rsp); err != nil {
		return fmt.Errorf("sync SayHello: %w", err)
	}
	fmt.Printf("sync  reply: %q (seq %d)\n", rsp.GetMessage(), rsp.GetSeq())

	// Sync calls from many goroutines.
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				seq := uint64(g*calls + i)
				rsp := new(hellopb.HelloReply)
				err := prx.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "sync", Seq: seq}, rsp)
				if err == nil && (rsp.GetSeq() != seq || rsp.GetMessage() != "hello sync") {
					err = fmt.Errorf("reply %v does not match request seq %d", rsp, seq)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	n := callers * calls
	fmt.Printf("sync  calls: %d from %d goroutines in %v, %d failed\n", n, callers, time.Since(start).Round(time.Millisecond), failed.Load())
	if failed.Load() > 0 {
		return fmt.Errorf("sync calls failed, first: %v", firstErr.Load())
	}

	// Async calls: callbacks run on the Communicator's asyncthread workers. Each goroutine keeps
	// at most 64 calls in flight, well inside asyncqueuecap (beyond it AsyncInvoke would refuse
	// calls with ErrQueueFull).
	start = time.Now()
	var pending sync.WaitGroup
	var asyncFailed atomic.Int64
	var firstAsync atomic.Value
	for g := range callers {
		wg.Go(func() {
			window := make(chan struct{}, 64)
			for i := range calls {
				seq := uint64(g*calls + i)
				rsp := new(hellopb.HelloReply)
				pending.Add(1)
				window <- struct{}{}
				err := prx.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "async", Seq: seq}, rsp, func(err error) {
					defer func() { <-window; pending.Done() }()
					if err == nil && (rsp.GetSeq() != seq || rsp.GetMessage() != "hello async") {
						err = fmt.Errorf("reply %v does not match request seq %d", rsp, seq)
					}
					if err != nil {
						asyncFailed.Add(1)
						firstAsync.CompareAndSwap(nil, err)
					}
				})
				if err != nil { // not sent: the callback will not run
					<-window
					pending.Done()
					asyncFailed.Add(1)
					firstAsync.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	pending.Wait()
	fmt.Printf("async calls: %d from %d goroutines in %v, %d failed (callbacks on %d async workers)\n",
		n, callers, time.Since(start).Round(time.Millisecond), asyncFailed.Load(), cfg.AsyncThread)
	if asyncFailed.Load() > 0 {
		return fmt.Errorf("async calls failed, first: %v", firstAsync.Load())
	}

	done := make(chan error, 1)
	last := new(hellopb.HelloReply)
	if err := prx.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "tars", Seq: 2}, last, func(err error) { done <- err }); err != nil {
		return err
	}
	if err := <-done; err != nil {
		return fmt.Errorf("async SayHello: %w", err)
	}
	fmt.Printf("async reply: %q (seq %d)\n", last.GetMessage(), last.GetSeq())
	fmt.Println("hello-client: all calls succeeded")
	return nil
}
