// Command tars2tarscomm generates Go for TARS IDL (.tars) files on tarscomm: the name says
// what it does, as tars2go and tars2cpp do for TarsGo and TarsCpp, whose wire format its output
// speaks byte for byte.
//
//	tars2tarscomm [-import github.com/me/app/protocol] -out protocol [-I dir]... QueryF.tars ...
//
// Every file given and every file they #include (looked up beside the including file, then in
// the -I directories) is generated: a TARS module A::B becomes Go package b in <out>/a/b
// (import path <import>/a/b), and each .tars file its own <file>.tars.go there. Without -import,
// the import path of <out> comes from the nearest go.mod in <out> or above it (its module path
// and <out>'s directory below it), so inside a module -import is needed only to override it.
// -check writes nothing and fails if a generated file on disk differs (for CI).
//
// The whole IDL is read: nested modules and `module A::B`, `::` references across modules and
// files, #include, structs (tags, require/optional, default values, nested structs, key[...]),
// enums with explicit values, const, vector and map of anything, unsigned types, interfaces
// with out parameters and return values; comments become doc comments. Errors name
// file:line:column. Each module is a Go package, so two modules may not use each other's types
// (Go packages cannot import each other): such a cycle is refused, naming the modules.
//
// # What is generated
//
// Types map as in tars2go: bool, byte→int8, short→int16, int→int32, long→int64, float→float32,
// double→float64, string; unsigned byte/short/int→uint8/uint16/uint32 (written as the next wider
// TARS integer); vector<byte>→[]byte (a simple list); vector<unsigned byte>→[]uint8 written as a
// LIST of int16, as TarsCpp requires; vector<T>→[]T; map<K,V>→map[K]V; structs by value; enums
// as int32 types with X_NAME constants.
//
// Each struct T has NewT() (a T with the IDL's default values: a literal T{} has Go's zero values
// instead, and its generated doc says so), Reset (back to the defaults), Encode/Decode (its fields, on codec.Encoder and
// codec.Decoder: no reflection; the strings and short lists of numbers of one decode share one
// allocation, and other slices and maps take one each; decoding into a used value reuses its
// memory),
// EncodeTag/DecodeTag (as a struct field), and MarshalTars/UnmarshalTars. An optional field equal
// to its default is not written (optional enums and structs always are), as tars2cpp and tars2go
// do; decoding sets every field (no stale values from an earlier decode), checks required
// fields, gives absent optional ones their default, and skips unknown tags.
//
// Each interface I gets an IProxy with, per function f, a sync F, an AsyncF whose typed callback
// runs on the Communicator's async workers, a OnewayF, and a FutureF returning a
// *future.Future, all taking servantproxy.CallOption; the return value travels at tag 0 and the
// parameters at tags 1..n (out parameters included, and every one is written in the reply). The
// server side is the IServer interface, UnimplementedIServer, and RegisterI(s, servant, impl),
// which registers every function on a *server.Server: an undecodable request is answered with
// codec.RetServerDecode, an unknown function by the server with codec.RetNoFunc. Parameters keep
// their IDL names (req, rsp, a, p, ...): the generated methods' own locals give way to them. Only
// Go keywords and predeclared names, and the names the generated signatures and bodies need
// (ctx, opts, cb, cur, ret, err, codec, errors, future), get a trailing underscore.
package main
