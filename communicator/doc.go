// Package communicator is the entry point of tarscomm: a Communicator owns the configuration,
// N net threads (gnet event loops), the async callback workers, and one ServantProxy per proxy
// string and set (another string for the same object, with other endpoints or a "#tag", gets
// one of its own), and wires them together.
//
//	cfg, err := conf.Load("client.toml") // or conf.Default()
//	comm, err := communicator.New(cfg, communicator.WithLogger(logger)) // or WithSlog(slog.Default())
//	defer comm.Close()
//
//	prx := new(hellopb.GreeterProxy) // generated; or a *servantproxy.ServantProxy
//	err = comm.StringToProxy("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015", prx)
//
// Endpoints are tcp, ssl (TLS) or udp (TARS over datagrams: one datagram per request and per
// reply, requests up to 65507 bytes, larger ones failing with ErrDatagramTooLarge).
//
// Close fails the calls still in flight with ErrClosed, runs the async callbacks already due, and
// stops every goroutine the Communicator started; it is safe to call more than once. A process
// usually has one Communicator; several are independent of each other. Given no logger, a
// Communicator says nothing until something is wrong (package logging).
//
// The package's examples are whole programs that go test runs: a server, a Communicator and
// sync, async and future calls; naming through a file and through the development registry with
// set routing; TLS and TARS authentication from TOML; Stats and the debug page.
package communicator
