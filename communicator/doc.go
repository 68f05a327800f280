// Package communicator is the entry point of tarscomm: a Communicator owns the configuration,
// N net threads (gnet event loops), the async callback workers, and one ServantProxy per object
// name, and wires them together.
//
//	cfg, err := conf.Load("client.toml") // or conf.Default()
//	comm, err := communicator.New(cfg, communicator.WithLogger(logger)) // or WithSlog(slog.Default())
//	defer comm.Close()
//
//	prx := new(hellopb.GreeterProxy) // generated; or a *servantproxy.ServantProxy
//	err = comm.StringToProxy("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015", prx)
//
// Close fails the calls still in flight with ErrClosed, runs the async callbacks already due, and
// stops every goroutine the Communicator started; it is safe to call more than once. A process
// usually has one Communicator; several are independent of each other. Given no logger, a
// Communicator says nothing until something is wrong (package logging).
package communicator
