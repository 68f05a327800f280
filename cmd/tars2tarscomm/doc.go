// Command tars2tarscomm generates Go for TARS IDL (.tars) files on tarscomm: the name says
// what it does, as tars2go and tars2cpp do for TarsGo and TarsCpp, whose wire format its output
// speaks byte for byte.
//
//	tars2tarscomm [-import github.com/me/app/protocol] -out protocol [-I dir]... QueryF.tars ...
//
// Every file given and every file they #include (looked up beside the including file, then in
// the -I directories; a path that is not found so, such as /home/tarsproto/App/Server/X.tars, by
// its base name in the same places, as tars2go does) is generated: a TARS module A::B becomes
// Go package b in <out>/a/b (import path <import>/a/b), and each .tars file its own
// <file>.tars.go there (see Names for the few names changed on the way). Without -import,
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
// their IDL names (req, rsp, a, p, ...): the generated methods' own locals give way to them.
//
// # Names
//
// Go names are the IDL's, capitalized where exported, except where Go would refuse them or read
// them otherwise:
//
//   - A parameter named like a Go keyword or predeclared name, _, a name the generated signatures
//     and bodies need (ctx, opts, cb, cur, ret, err, codec, errors, future, servantproxy), the
//     import name of a module's package (user, for module User), or a Go name of its own package
//     (Status, for an enum Status; IFResult, the result type of I.f) gets underscores added until
//     it is none of these: type→type_, _→__, Status→Status_.
//   - An interface I's own types (IProxy and NewIProxy, IServer and UnimplementedIServer,
//     RegisterI, and IFResult for a function f with out parameters) get underscores added when
//     the IDL already names a type, enumerator or constant of the package so: beside a struct
//     GameServer, interface Game's server type is GameServer_.
//   - A package's name is the module's last name in lower case, with an underscore added when it
//     is a Go keyword or predeclared name, main or init (module Main is package main_, in
//     directory main).
//   - A module's directory is its path in lower case (A::B in a/b), a part named vendor,
//     internal or testdata getting _tars (Vendor::Api in vendor_tars/api): the go command
//     refuses an import path holding vendor, hides what is under internal and skips testdata.
//   - A module's package is imported as its path in lower case joined by _ (A::B as a_b), with
//     "tars" added when that is a Go keyword or predeclared name, init, a package or local name
//     the generated code uses (server, codec, d, e, ok1, ...) or two letters or fewer. When two
//     modules used by one file get one name (A::B and A_B; AB and Abtars), the one whose import
//     path sorts first keeps it and the other gets a number from 2 (a_b2).
//   - The generated file's name is the .tars file's base name in lower case, without a leading _
//     or . (which Go ignores) and with _tars added before its first dot when go build would read
//     the name as a build constraint (x_android, x_amd64, x_linux_test: Pay_android.tars makes
//     pay_android_tars.tars.go). Two .tars files of one module that would make one Go file are
//     refused.
package main
