// Package tarsidl shows how tarscomm calls and serves a function of a service defined in TARS
// IDL (a .tars file) rather than in protobuf, such as
//
//	module Hello {
//	    interface Echo {
//	        int echo(vector<byte> req, out vector<byte> rsp);
//	    };
//	};
//
// The body (sBuffer) of a .tars call holds the parameters TARS-encoded at tags 1..N; the body
// of its reply holds the return value at tag 0 and the out-parameters at their own tags. A
// client writes the parameters with codec.Encoder, sends them with ServantProxy.InvokeRaw (or
// AsyncInvokeRaw), and reads the reply with codec.Decoder; a server.HandlerFunc does the
// reverse. These are the bytes TarsGo's and TarsCpp's generated code exchange, so the same
// calls work against their servers (the interop module checks it against TarsGo).
//
// The package holds no code: its example is the documentation.
package tarsidl
