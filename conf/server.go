package conf

import (
	"errors"
	"fmt"
	"time"
)

// Server configures the project's gnet TARS server, the table [server]. Package
// server/serverconf builds the servers it describes: one per [[server.adapter]].
type Server struct {
	// NetThread is the number of gnet event loops of each adapter's server. Default 1 (a fixed
	// value, not the number of CPUs, so that a configuration behaves the same on every machine);
	// 1..256.
	NetThread int `toml:"netthread"`

	// MaxPacketSize is the largest request frame accepted, in bytes; a larger request is
	// answered RetServerDecode (-1) naming the sizes and skipped unread, the connection going
	// on. A reply whose frame would be larger is answered RetServerEncode (-2)
	// instead, saying so (on udp the limit is at most one datagram). Default 10 MiB, 64..1 GiB.
	MaxPacketSize int `toml:"max-packet-size"`

	// FrameBudget bounds the bytes that incomplete large requests of all the connections of an
	// adapter's server reserve ahead of their arrival (server.WithFrameBudget): beyond it a
	// request is received into a buffer that grows with the bytes that arrive. 0: the server's
	// default, 256 MiB; -1: no budget. -1..1 TiB.
	FrameBudget int `toml:"frame-budget"`

	// HandshakeTimeout bounds a client's TLS handshake on an ssl adapter; a client that has not
	// completed it by then is disconnected. Default 10s, 1ms..1h.
	HandshakeTimeout time.Duration `toml:"handshake-timeout"`

	// ServerTLS holds ca, cert, key, verifyclient, tls-min-version and tls-ciphers: the TLS
	// settings of every adapter whose endpoint is ssl (TarsCpp keeps them at this level too); an
	// adapter may override each.
	ServerTLS

	// Adapters are the servants served and where: [[server.adapter]] tables.
	Adapters []Adapter `toml:"adapter,omitempty"`
}

// ServerTLS holds the TLS settings of a server side, under TarsCpp's key names:
//
//	cert = "/etc/tars/server.pem" # this server's certificate chain; with key, required by ssl adapters
//	key = "/etc/tars/server.key"
//	ca = "/etc/tars/ca.pem"       # the CAs of the clients' certificates, for verifyclient
//	verifyclient = true           # mutual TLS: a client must present a certificate signed by ca
//	tls-min-version = "1.2"       # "1.2" (default) or "1.3" (then no tls-ciphers)
//	tls-ciphers = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" # TLS 1.2 suites; default Go's list
type ServerTLS struct {
	CA           string `toml:"ca"`
	Cert         string `toml:"cert"`
	Key          string `toml:"key"`
	VerifyClient bool   `toml:"verifyclient"`
	TLSVersions
}

// Or returns t with every key it leaves empty taken from base: an adapter's settings over the
// [server]'s. cert and key are taken together; verifyclient is on if either turns it on (an
// adapter cannot turn off the [server]'s).
func (t ServerTLS) Or(base ServerTLS) ServerTLS {
	if t.CA == "" {
		t.CA = base.CA
	}
	if t.Cert == "" && t.Key == "" {
		t.Cert, t.Key = base.Cert, base.Key
	}
	t.VerifyClient = t.VerifyClient || base.VerifyClient
	t.TLSVersions = t.TLSVersions.Or(base.TLSVersions)
	return t
}

// Check reports the problems of t, each naming its key under prefix ("server." or
// "server.adapter[0]."): cert without key or the reverse, files that cannot be read, a bad
// tls-min-version or tls-ciphers, verifyclient without a ca.
func (t ServerTLS) Check(prefix string) error {
	err := checkTLSFiles(prefix, t.CA, t.Cert, t.Key, t.TLSVersions)
	if t.VerifyClient && t.CA == "" {
		err = errors.Join(err, fmt.Errorf("conf: %sverifyclient = true needs %sca: the CAs that sign the clients' certificates", prefix, prefix))
	}
	return err
}

// Adapter binds one servant to one endpoint, as a TARS server's adapter does, under TarsCpp's
// adapter keys where it has them.
type Adapter struct {
	// Servant is the object name clients call, e.g. "Hello.Server.GreeterObj".
	Servant string `toml:"servant"`

	// Endpoint is where to listen, in the endpoint grammar: "tcp -h 127.0.0.1 -p 18015". Port 0
	// picks a free port; "ssl -h ..." serves TLS (cert and key required); -e 1 requires TARS
	// authentication (accesskey and secretkey required); -t is the idle timeout in milliseconds
	// (server.WithIdleTimeout), counted in whole seconds as TarsCpp does: absent means 60000,
	// what TARS deployments write on their adapters; 0 or less than 1000 never closes an idle
	// connection. The server parses it (package endpoint); conf checks only that it is set.
	Endpoint string `toml:"endpoint"`

	// Threads is the number of goroutines running this adapter's handlers (server.WithWorkers),
	// so that handlers may block. 0, the default, runs them inline on the event loops: the
	// fastest, for handlers that never block. 0..1024.
	Threads int `toml:"threads"`

	// QueueCap bounds the requests waiting for a handler goroutine when Threads > 0; a request
	// finding it full is answered -9 (overload). 0 means 10000. 0..16777216.
	QueueCap int `toml:"queuecap"`

	// QueueTimeout bounds, in milliseconds, how long a request may wait for one of the
	// adapter's handler goroutines (Threads > 0; server.WithQueueTimeout): one that waited longer,
	// or longer than its client's timeout, is answered -6 (server queue timeout) without running.
	// 0 means 10000, TarsCpp's default; -1 never times a request out; a value below 3000 is
	// raised to 3000, as TarsCpp raises it (server.WithQueueTimeout in code takes any value).
	// -1..86400000.
	QueueTimeout int `toml:"queuetimeout"`

	// MaxConns bounds the adapter's open connections (server.WithMaxConns): one accepted beyond
	// it is closed at once. 0 (the default) or -1 sets no limit: TarsCpp falls back to 128 when
	// a deployment's template does not set it, a bound that would refuse the 129th client of a
	// file that forgot the key. -1..4194303.
	MaxConns int `toml:"maxconns"`

	// BackPacketLimit and BackPacketMin are TarsCpp's rule against clients that do not read their
	// replies (server.WithBacklog): a connection whose unsent reply bytes stay above
	// BackPacketLimit and whose client takes at most BackPacketMin bytes (gone from the socket's
	// send queue) in each of 3 windows of 5 s in a row is closed. 0 means TarsCpp's defaults, 104857600 (100 MiB) and 1024; a
	// BackPacketLimit of -1 turns the rule off. BackPacketLimit -1..2147483647, BackPacketMin
	// 0..2147483647.
	BackPacketLimit int `toml:"backpacketlimit"`
	BackPacketMin   int `toml:"backpacketmin"`

	// MaxBacklog closes a connection at once when its unsent reply bytes exceed it
	// (server.WithMaxBacklog): the bound on what one client that does not read can make the
	// server hold. 0 means 268435456 (256 MiB); -1 removes the cap. -1..1099511627776.
	MaxBacklog int `toml:"maxbacklog"`

	// ServerTLS overrides the [server]'s ca, cert, key, verifyclient, tls-min-version and
	// tls-ciphers for this adapter; they apply only to an ssl endpoint.
	ServerTLS

	// Auth holds the accesskey and secretkey a client must authenticate with on an endpoint with
	// -e 1 (TarsCpp's adapter keys).
	Auth
}

// ForAdapter returns adapter i with the [server]'s TLS settings merged under its own.
func (s *Server) ForAdapter(i int) Adapter {
	a := s.Adapters[i]
	a.ServerTLS = a.ServerTLS.Or(s.ServerTLS)
	return a
}

// defaultServer returns the [server] defaults.
func defaultServer() Server {
	return Server{
		NetThread:        1,
		MaxPacketSize:    defaultMaxPacketSize,
		HandshakeTimeout: 10 * time.Second,
	}
}
