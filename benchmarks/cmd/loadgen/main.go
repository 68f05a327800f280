// Command loadgen drives one framework's echo client, closed-loop, against running echo
// servers, and prints one RESULT line (see internal/result) for the measured phase.
//
//	go run ./cmd/loadgen -fw tarscomm -addr 127.0.0.1:18000 -c 64 -d 10s -size 128 -srvpid 1234
//	go run ./cmd/loadgen -fw tarscomm -async -addr 127.0.0.1:18000 -c 512 -d 3s
//	go run ./cmd/loadgen -fw kitex -mux -addr 127.0.0.1:18002 -c 64 -n 100000
//
// -fw is tarscomm, tarsgo, grpc, kitex, or stdlib (the minimal pipelined TARS client, the
// baseline); TARS clients (tarscomm, tarsgo, stdlib) can call either TARS server. -async
// (tarscomm) keeps -c calls in flight with callbacks instead of -c goroutines; -mux (kitex)
// uses Kitex's multiplexed transport instead of its connection pool, against a server started
// with -mux. The result line names the mode: fw=tarscomm-async, fw=kitex-mux.
//
// Errors (failed calls, replies that do not echo the request) are counted in errs= and
// described on stderr; -cpuprofile FILE writes the client's CPU profile, -trace FILE its
// execution trace, -memprofile FILE its heap profile at the end of the measured phase. The exit
// status is 0 whenever a result was measured, 2 if some calls failed, 1 if nothing could be
// measured.
//
// -sync is for the driver (cmd/compare): right before each edge of the measured phase the load
// generator prints "PHASE start" (or "PHASE end") and waits for a line on its standard input,
// so that the driver can read the server's allocations at the same moment.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/loadgen"
	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

func main() {
	fw := flag.String("fw", "tarscomm", "client framework: tarscomm, tarsgo, grpc, kitex or stdlib")
	addr := flag.String("addr", "127.0.0.1:18000", "server host:port, or a comma-separated list")
	servant := flag.String("servant", peer.Servant, "TARS object name (TARS clients)")
	c := flag.Int("c", 64, "concurrent callers (calls in flight with -async)")
	d := flag.Duration("d", 10*time.Second, "length of the measured phase (its upper bound with -n)")
	n := flag.Uint64("n", 0, "end the measured phase after this many calls (0: run for -d)")
	size := flag.Int("size", 128, "payload bytes")
	timeout := flag.Duration("timeout", time.Second, "timeout of each call")
	warmup := flag.Duration("warmup", time.Second, "warm-up before the measured phase")
	srvpid := flag.Int("srvpid", 0, "server process id, to measure its CPU (0: not measured)")
	netthreads := flag.Int("netthreads", 0, "tarscomm: net threads (0: the configuration's default)")
	confFile := flag.String("conf", "", "tarscomm: client configuration file (TOML, every key of conf/testdata/full.toml) instead of the defaults; -netthreads and -timeout still apply, asyncqueuecap is not raised")
	nostats := flag.Bool("nostats", false, "tarscomm: turn call counting off (to measure its cost)")
	async := flag.Bool("async", false, "tarscomm: asynchronous calls, -c in flight")
	mux := flag.Bool("mux", false, "kitex: multiplexed transport (server must run with -mux)")
	conns := flag.Int("conns", 1, "kitex -mux: connections per address")
	cpuprofile := flag.String("cpuprofile", "", "write the client's CPU profile of the whole run (warm-up included) to this file")
	memprofile := flag.String("memprofile", "", "write the client's heap profile at the end of the measured phase to this file (in use: as of the last collection)")
	traceFile := flag.String("trace", "", "write the client's execution trace of the whole run (warm-up included) to this file (go tool trace; -pprof=sched shows where goroutines waited for a CPU)")
	syncEdges := flag.Bool("sync", false, "print PHASE start|end at each edge of the measured phase and wait for a line on stdin (for the driver)")
	flag.Parse()

	name := *fw
	switch {
	case !slices.Contains([]string{"tarscomm", "tarsgo", "grpc", "kitex", "stdlib"}, name):
		fatal(fmt.Sprintf("unknown -fw %q: want tarscomm, tarsgo, grpc, kitex or stdlib", name))
	case *confFile != "" && name != "tarscomm":
		fatal("-conf is for -fw tarscomm")
	case *async && name != "tarscomm":
		fatal("-async is for -fw tarscomm")
	case *mux && name != "kitex":
		fatal("-mux is for -fw kitex")
	case *async:
		name = "tarscomm-async"
	case *mux:
		name = "kitex-mux"
	}
	if *cpuprofile != "" {
		record(*cpuprofile, pprof.StartCPUProfile, pprof.StopCPUProfile)
	}
	if *traceFile != "" {
		record(*traceFile, trace.Start, trace.Stop)
	}
	var edge func(string)
	if *syncEdges {
		stdin := bufio.NewReader(os.Stdin)
		edge = func(phase string) {
			fmt.Printf("%s%s\n", result.PhasePrefix, phase)
			_, _ = stdin.ReadString('\n') // at EOF, go on without waiting
		}
	}
	if *memprofile != "" {
		edge = heapAtEnd(*memprofile, edge)
	}
	res, err := loadgen.Run(loadgen.Config{
		Client: name,
		Peer: peer.ClientConfig{
			Addrs:      strings.Split(*addr, ","),
			Servant:    *servant,
			Timeout:    *timeout,
			NetThreads: *netthreads,
			NoStats:    *nostats,
			Conf:       *confFile,
			Conns:      *conns,
		},
		C:        *c,
		Duration: *d,
		N:        *n,
		Size:     *size,
		Warmup:   *warmup,
		SrvPID:   *srvpid,
		Log:      os.Stderr,
		Edge:     edge,
	})
	if err != nil {
		fatal(err.Error())
	}
	fmt.Println(res.String())
	fmt.Println(res.Mem())
	code := 0
	if res.Errs > 0 {
		code = 2
	}
	stopProfile()
	os.Exit(code) // without waiting for frameworks' background goroutines
}

// heapAtEnd returns next (which may be nil) preceded, at the end of the measured phase, by
// writing the heap profile to path.
func heapAtEnd(path string, next func(string)) func(string) {
	return func(phase string) {
		if phase == "end" {
			f, err := os.Create(path)
			if err != nil {
				fatal(err.Error())
			}
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				fatal(err.Error())
			}
			f.Close()
		}
		if next != nil {
			next(phase)
		}
	}
}

// stopProfile ends the -cpuprofile profile and the -trace trace, if any, before the process exits.
var stopProfile = func() {}

// record creates path and starts writing a profile or trace to it with start; stopProfile then
// stops it with stop and closes the file, before what it stopped already.
func record(path string, start func(io.Writer) error, stop func()) {
	f, err := os.Create(path)
	if err != nil {
		fatal(err.Error())
	}
	if err := start(f); err != nil {
		fatal(err.Error())
	}
	before := stopProfile
	stopProfile = func() { stop(); f.Close(); before() }
}

func fatal(msg string) {
	stopProfile()
	fmt.Fprintln(os.Stderr, "loadgen:", msg)
	os.Exit(1)
}
