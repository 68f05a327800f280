// Package peer holds, for every framework the benchmarks compare, an echo server and a client
// behind one small interface, so that the load generator drives them all the same way.
//
// Clients: tarscomm (sync, and async with a callback per call), TarsGo, gRPC-go, Kitex (with a
// connection pool, or multiplexed) and a minimal pipelined TARS client on the standard library
// (the baseline). Servers: tarscomm's server, TarsGo's, gRPC-go's, Kitex's (pooled or
// multiplexed) and a minimal multiplexed TARS server on the standard library. The stdlib
// client and server together are "the floor": what TARS over TCP costs with no framework at
// all. The TARS clients (tarscomm, TarsGo, stdlib) call any of the TARS servers (tarscomm,
// TarsGo, stdlib).
//
// Every client checks every reply: the sequence number and the payload must come back
// unchanged, or the call counts as failed (ErrMismatch).
//
// Each client is used the way its documentation shows, with the call timeout set the way the
// framework offers: tarscomm's sync/async-invoke-timeout, TarsGo's TarsSetTimeout, Kitex's
// WithRPCTimeout, and a context deadline per call for gRPC-go, which has no other. Requests
// and replies are reused per caller where the API takes them from the caller.
package peer

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/echopb"
)

// The echo service every server offers.
const (
	Servant = "Bench.EchoServer.EchoObj" // TARS object name
	Method  = "Echo"                     // TARS function and gRPC/Kitex method
)

// MaxPayload is the largest payload every client and server here accepts. Each framework's
// message or packet limit is raised to MaxFrame where its default is lower (gRPC-go's 4 MiB
// receive limit) or close (the TARS frameworks' 10 MiB), on both sides.
const MaxPayload = 16 << 20

// MaxFrame is the message or packet limit given to every framework: MaxPayload plus room for
// the protobuf and TARS headers around it.
const MaxFrame = MaxPayload + 64<<10

// ErrMismatch reports a reply whose sequence number or payload differs from the request's.
var ErrMismatch = errors.New("peer: reply does not echo the request")

// checkReply checks rsp as check does, then drops its data: as the floor's and Kitex's callers
// drop theirs, which decode each reply into a fresh value. A caller that kept its last reply
// until the next one replaced it would hold the concurrency times the payload alive between
// calls (512 MiB for 64 callers of 8 MiB), which the collector scans and the heap grows around:
// a cost of the harness, not of the client measured.
func checkReply(seq uint64, payload []byte, rsp *echopb.EchoRsp) error {
	err := check(seq, payload, rsp.Seq, rsp.Data)
	rsp.Data = nil
	return err
}

// check compares a reply with its request.
func check(seq uint64, payload []byte, gotSeq uint64, gotData []byte) error {
	if gotSeq != seq {
		return fmt.Errorf("%w: seq %d, want %d", ErrMismatch, gotSeq, seq)
	}
	if !bytes.Equal(gotData, payload) {
		return fmt.Errorf("%w: %d payload bytes differ from the %d sent", ErrMismatch, len(gotData), len(payload))
	}
	return nil
}

// ClientConfig configures a client.
type ClientConfig struct {
	Addrs       []string      // host:port of each server endpoint
	Servant     string        // TARS object name (TARS clients only); default Servant
	Timeout     time.Duration // per call
	Concurrency int           // callers that will share the client (sizes Kitex's pool)
	Payload     int           // payload bytes of each call, at most MaxPayload (sizes tarscomm's send-buffer-limit)
	NetThreads  int           // tarscomm: net threads; 0 keeps the configuration's default
	NoStats     bool          // tarscomm: call counting off (communicator.WithoutStats)
	Conf        string        // tarscomm: a TOML file read as the base configuration instead of conf.Default()
	Conns       int           // Kitex mux: connections per address; 0 means 1
}

// A Client is one framework's client of the echo service. Close releases what it can; some
// frameworks (TarsGo) keep process-wide state until exit.
type Client interface {
	// NewCaller returns the caller one closed-loop worker uses; payload is the data the
	// worker sends and expects back, and must not change.
	NewCaller(worker int, payload []byte) Caller
	Close() error
}

// A Caller makes one call at a time; it belongs to one goroutine.
type Caller interface {
	// Call sends payload with seq, waits for the reply and checks it.
	Call(seq uint64) error
}

// An AsyncClient also makes calls whose completion runs a callback.
type AsyncClient interface {
	Client
	// NewSlot returns a slot for one call in flight at a time; done runs once for each Start
	// that returned nil, with the call's error (mismatches included), on a goroutine of the
	// framework's.
	NewSlot(worker int, payload []byte, done func(error)) Slot
}

// A Slot starts one call at a time. Start may be called again from the done callback.
type Slot interface {
	Start(seq uint64) error
}

type clientFactory func(ClientConfig) (Client, error)

// clients lists every client by name.
var clients = map[string]clientFactory{
	"tarscomm":       newTarscommClient,
	"tarscomm-async": newTarscommClient,
	"tarsgo":         newTarsgoClient,
	"grpc":           newGRPCClient,
	"kitex":          newKitexPoolClient,
	"kitex-mux":      newKitexMuxClient,
	"stdlib":         newStdlibClient,
}

// Clients returns the names NewClient accepts, sorted.
func Clients() []string {
	names := make([]string, 0, len(clients))
	for n := range clients {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewClient returns the client called name (one of Clients).
func NewClient(name string, cfg ClientConfig) (Client, error) {
	f, ok := clients[name]
	if !ok {
		return nil, fmt.Errorf("peer: unknown client %q (have %v)", name, Clients())
	}
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("peer: no server address")
	}
	if cfg.Servant == "" {
		cfg.Servant = Servant
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	cfg.Concurrency = max(cfg.Concurrency, 1)
	return f(cfg)
}

// A Server is one framework's echo server, listening.
type Server interface {
	Addr() string // the address it listens on
	Stop()        // stops it, where the framework can; TarsGo's stops with the process
}

// ServerConfig configures a server.
type ServerConfig struct {
	Loops int // tarscomm: event loops (0: GOMAXPROCS)
}

type serverFactory func(addr string, cfg ServerConfig) (Server, error)

// servers lists every server by name.
var servers = map[string]serverFactory{
	"tarscomm":  startTarscommServer,
	"tarsgo":    startTarsgoServer,
	"grpc":      startGRPCServer,
	"kitex":     startKitexPoolServer,
	"kitex-mux": startKitexMuxServer,
	"stdlib":    startStdlibServer,
}

// Servers returns the names StartServer accepts, sorted.
func Servers() []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StartServer starts the server called name on addr (host:port; port 0 picks a free port)
// and returns once it accepts connections.
func StartServer(name, addr string, cfg ServerConfig) (Server, error) {
	f, ok := servers[name]
	if !ok {
		return nil, fmt.Errorf("peer: unknown server %q (have %v)", name, Servers())
	}
	return f(addr, cfg)
}

// SpeaksTARS reports whether the server called name speaks the TARS protocol, so that any TARS
// client (tarscomm, tarscomm-async, tarsgo, stdlib) can call it.
func SpeaksTARS(server string) bool {
	return slices.Contains([]string{"tarscomm", "tarsgo", "stdlib"}, server)
}

// IsTARSClient reports whether the client called name speaks TARS.
func IsTARSClient(client string) bool {
	return slices.Contains([]string{"tarscomm", "tarscomm-async", "tarsgo", "stdlib"}, client)
}
