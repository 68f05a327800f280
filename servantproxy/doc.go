// Package servantproxy is the handle users call a TARS servant through: sync calls (Invoke),
// async calls whose callback runs on the Communicator's asyncproc workers (AsyncInvoke), one-way
// calls (InvokeOneway), and raw-body variants for services whose bodies are TARS-encoded
// (InvokeRaw, AsyncInvokeRaw). Generated proxies (cmd/protoc-gen-go-tars) wrap it.
//
// A ServantProxy is safe for concurrent use. It holds one ObjectProxy per net thread and makes
// the first layer of load balancing: calls go round-robin over the net threads, or, with a hash
// code (WithHash), always to the same thread and, there, to the same endpoint.
//
// The caller's goroutine encodes the whole request frame (the protobuf body is marshalled
// straight into it) and hands a pooled call object to the net thread; a sync caller then sleeps
// on the call's reusable channel until the loop matches the reply, the deadline passes, or its
// context ends. No goroutine is started per call, and a plain call creates no timer or channel;
// a call that may send a backup request (backup-request) arms one timer.
//
// Deadlines: a call's deadline is the earlier of its context's deadline and the configured
// invoke timeout (sync-invoke-timeout or async-invoke-timeout, or WithTimeout); the time left is
// sent to the server as iTimeout, rounded up to whole milliseconds, so that the server's deadline
// for the request is never before the call's. A server handler's ctx (package server) has its client's
// deadline: a call made with it, or with a ctx made from it by adding values, takes that deadline
// and, unlike a call made with any other ctx that can end, does not watch it besides (a sync call
// ends only if the server's Stop gives up on the handler), so relaying a request costs no timer
// and an async call a handler starts is not cut short when the handler returns. Errors can be told apart with
// errors.Is and errors.As:
// ErrTimeout (also context.DeadlineExceeded), ErrQueueFull, ErrNoEndpoint, ErrClosed,
// ErrConnection, ErrOverload, ErrRequestTooLarge, ErrEncode, ErrDecode, ErrInvalidTimeout, and
// *ServerError for a non-zero TARS return code; package communicator re-exports them beside
// those of the layers below (ErrDatagramTooLarge, ErrNaming, ErrTLS, ErrAuth).
//
// Server push (TarsCpp's tars_set_push_callback): a server may send a packet with request id 0
// on any connection at any time. SetPushCallback makes a PushCallback receive those packets, and
// the opening and closing of the proxy's connections, on an async worker (push.go). Without a
// callback a pushed packet is logged and dropped and the connection stays up. A generated proxy
// reaches it through its ServantProxy method.
//
//	var sp servantproxy.ServantProxy
//	err := comm.StringToProxy("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015", &sp)
//	rsp := new(hellopb.HelloReply)
//	err = sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "tars"}, rsp)
//
// ExampleServantProxy_Invoke runs this against the project's server.
package servantproxy
