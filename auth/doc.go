// Package auth is TARS's local authentication, the endpoint option -e 1: the first packet a
// client sends on a connection proves that it holds the secret key of an access key, and the
// server serves the connection only if it does.
//
// On the wire (TarsCpp's AuthLogic and AuthF.tars): the client's first packet is a normal
// request, version 1, request id 1, iMessageType 0x40, sServantName the object called and
// sFuncName "InnerAuthServer", whose sBuffer holds a TARS-encoded BasicAuthPackage: tag 1 the
// object name, 2 the access key, 3 the time (Unix seconds), 4 the hash method ("sha1"), 5 the
// signature. With secret1 = hex(sha1(secret key)) and secret2 = hex(sha1(secret1)), the
// signature is secret1 encrypted with 3DES (ECB, PKCS#5 padding) under the first 24 bytes of
// hex(md5(secret2 with its first 8 bytes OR-ed with the time's 8 little-endian bytes)). The
// server checks the object, the access key, a time within an hour of its own and the method,
// decrypts, and compares sha1 of what it got with secret2. It answers a success with a response
// to request id 1 whose sBuffer is "AUTH_SUCC" and closes the connection on any failure;
// nothing else is sent or served on the connection before.
//
// The scheme is TARS's and interoperates with TarsCpp; it proves the key but protects nothing
// else: use it over ssl endpoints where the network is not trusted.
//
// In tarscomm the client side runs in the net thread's dial goroutine, after the TCP connect
// (and the TLS handshake on ssl endpoints) and within the same connect timeout: calls wait in
// the connect backlog under their own deadlines, a refusal is a failed connect whose error
// matches ErrAuth, and the loop's hot path is untouched. The server side is server.WithAuth.
package auth
