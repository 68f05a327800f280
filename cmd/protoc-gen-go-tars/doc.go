// Command protoc-gen-go-tars is a protoc plugin that generates typed tarscomm stubs for the
// services of .proto files: TARS servants whose bodies are protobuf messages, wire-compatible
// with TarsGo's protobuf services (sFuncName is the method name, sBuffer the marshalled
// message, iVersion 1).
//
// For a file x.proto it writes x_tars.pb.go, beside the x.pb.go of protoc-gen-go, holding for
// each service S:
//
//   - SProxy, the client: per method M a sync call M(ctx, req, opts...) (*Rsp, error), an
//     async call AsyncM(ctx, req, cb, opts...) whose typed callback runs on the Communicator's
//     async workers, a one-way call OnewayM(ctx, req, opts...), and FutureM(ctx, req,
//     opts...), which returns a *future.Future of the reply, completed on the async workers
//     without a goroutine per call. SProxy implements
//     servantproxy.Setter, so Communicator.StringToProxy binds it.
//   - SServer, the interface a server implements, UnimplementedSServer to embed for forward
//     compatibility, and RegisterS(s, servant, impl), which registers every method on a
//     *server.Server with server.HandleProto.
//
// Methods whose .proto says option idempotency_level = IDEMPOTENT (or NO_SIDE_EFFECTS) are
// marked on the ServantProxy (ServantProxy.MarkIdempotent) when a proxy is bound: with
// backup-request set for the servant, their calls (sync, async, future) may have backup requests.
//
// Streaming methods are refused: TARS has no streaming calls. So is a generated name that
// another top-level name of the Go package already has (a message GameServer, in any file of the
// package, beside service Game's GameServer interface). A method's parameters and locals (p,
// ctx, req, opts, cb, rsp, err, a, f) get an underscore when the reply's package has their name.
//
// Usage, with protoc-gen-go and protoc-gen-go-tars on PATH:
//
//	protoc --go_out=. --go_opt=paths=source_relative \
//		--go-tars_out=. --go-tars_opt=paths=source_relative hello.proto
//
// The plugin takes protogen's standard options (paths, module, M mappings) and no other.
// `protoc-gen-go-tars --version` prints its version.
package main
