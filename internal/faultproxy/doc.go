// Package faultproxy is a TCP proxy for tests: it listens on 127.0.0.1, forwards every accepted
// connection to an upstream address, and can be switched at run time to misbehave the way real
// networks and servers do, so that end-to-end tests exercise a client's fault handling over real
// loopback sockets instead of a mocked network.
//
// The faults, each switchable at any time from any goroutine:
//
//   - SetDelay holds every chunk (in both directions) for a while before forwarding it;
//   - BlackHole keeps reading from one or both sides but forwards nothing;
//   - Stall stops reading from one or both sides, so TCP flow control pushes back on the sender;
//   - Cut resets every current connection;
//   - Refuse(Reset) accepts new connections and resets them at once; Refuse(Closed) closes the
//     listener, so connects are refused by the kernel; Refuse(Accept) listens again on the same
//     port;
//   - CorruptNext replaces the next bytes the server sends with garbage, optionally closing the
//     connection after them (a truncated frame);
//   - Throttle limits one or both directions to some bytes per second (a slow link);
//   - Hangup closes every current connection with a FIN (a server closing idle connections).
//
// Pass undoes all of them. Stats counts accepts, connections and bytes, so tests can assert dial
// rates and traffic. A Proxy forwards only connections from its own process (FromThisProcess):
// one from another process, say a client of another package's tests that dials a port it used
// before, is reset and counted apart (Stats.Foreign), so a test counts only its own traffic.
// ListenStalled gives an address whose connects hang (a full accept queue), for tests of connect
// timeouts; ListenHeld gives one whose connects hang until Release and are then
// forwarded (those of this process only, as by a Proxy), for tests of calls queued while a
// connect is under way.
//
// # Goroutines
//
// A Proxy runs one accept goroutine while it listens, one goroutine per accepted connection while
// it dials the upstream, and four per forwarded connection (a reader and a writer per direction).
// Close stops every one of them and waits for them. Every method is safe for concurrent use.
//
//	p, err := faultproxy.New(serverAddr)
//	defer p.Close()
//	// point the client at p.Addr() ...
//	p.BlackHole(faultproxy.Both) // the server seems to stall
//	p.Cut()                      // every connection is reset
//	p.Pass()                     // healthy again
package faultproxy
