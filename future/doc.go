// Package future is the result of a call that has not ended yet: a Future[T] completes once,
// with a value or an error, and can be waited for under a context (Get), observed with a
// callback (OnDone), or joined with others (Join, WhenAll) the way brpc's Join and TarsCpp's
// when_all do.
//
// A Future costs no goroutine. Whoever completes it (for tarscomm's proxies, the async worker
// that runs the call's callback) runs its OnDone callbacks right there, and wakes the
// goroutines blocked in Get through a channel that is made only if one of them waits before
// the completion. A Future that is only observed with OnDone, or only read after it
// completed, allocates nothing but itself.
//
// Futures of tarscomm calls come from the Future variants of the generated proxies (both
// protoc-gen-go-tars and tars2tarscomm generate them) and of servantproxy.ServantProxy
// (FutureInvoke, FutureInvokeRaw). They are made with MakeCall (servantproxy.NewCallFuture): a
// Get with the call's own ctx returns the call's error, not the ctx's bare one; a Get (or Join)
// of one inside an async callback or an OnDone, on an async worker (of any Communicator), has a
// stand-in worker run the callbacks waiting for a worker while it waits, since the future's own
// completion is one of them; it never waits for itself, even with every worker waiting so.
//
//	f1 := greeter.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "a"})
//	f2 := greeter.FutureSayHello(ctx, &hellopb.HelloRequest{Name: "b"})
//	if err := future.Join(ctx, f1, f2); err != nil { ... } // ctx ended
//	r1, err1 := f1.Get(ctx) // completed: returns at once
package future
