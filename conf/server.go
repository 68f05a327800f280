package conf

// Server configures the project's gnet TARS server, the table [server].
type Server struct {
	// NetThread is the number of gnet event loops. Default 1 (a fixed value, not the number of
	// CPUs, so that a configuration behaves the same on every machine); 1..256.
	NetThread int `toml:"netthread"`

	// MaxPacketSize is the largest request frame accepted, in bytes; a larger length prefix
	// closes the connection. Default 10 MiB, 64..1 GiB.
	MaxPacketSize int `toml:"max-packet-size"`

	// Adapters are the servants served and where: [[server.adapter]] tables.
	Adapters []Adapter `toml:"adapter,omitempty"`
}

// Adapter binds one servant to one endpoint, as a TARS server's adapter does.
type Adapter struct {
	// Servant is the object name clients call, e.g. "Hello.Server.GreeterObj".
	Servant string `toml:"servant"`

	// Endpoint is where to listen, in the endpoint grammar: "tcp -h 127.0.0.1 -p 18015". Port 0
	// picks a free port. The server parses it (package endpoint); conf checks only that it is
	// set.
	Endpoint string `toml:"endpoint"`
}

// defaultServer returns the [server] defaults.
func defaultServer() Server {
	return Server{
		NetThread:     1,
		MaxPacketSize: defaultMaxPacketSize,
	}
}
