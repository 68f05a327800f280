// Command echoserver runs one framework's echo server (method Echo; TARS servant
// Bench.EchoServer.EchoObj) until it is interrupted or -lifetime passes.
//
//	go run ./cmd/echoserver -fw tarscomm -addr 127.0.0.1:18000
//	go run ./cmd/echoserver -fw kitex -mux -addr 127.0.0.1:0
//
// -fw is tarscomm, tarsgo, grpc or kitex; -mux (kitex) serves Kitex's multiplexed transport.
// Port 0 picks a free port. Once the server accepts connections it prints one line:
//
//	echoserver: fw=tarscomm addr=127.0.0.1:18000 pid=1234
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
)

func main() {
	fw := flag.String("fw", "tarscomm", "server framework: tarscomm, tarsgo, grpc or kitex")
	addr := flag.String("addr", "127.0.0.1:18000", "listen address host:port (port 0: a free port)")
	mux := flag.Bool("mux", false, "kitex: multiplexed transport")
	loops := flag.Int("loops", 0, "tarscomm: event loops (0: GOMAXPROCS)")
	lifetime := flag.Duration("lifetime", time.Hour, "exit by itself after this long")
	flag.Parse()

	name := *fw
	switch {
	case !slices.Contains([]string{"tarscomm", "tarsgo", "grpc", "kitex"}, name):
		fatal(fmt.Sprintf("unknown -fw %q: want tarscomm, tarsgo, grpc or kitex", name))
	case *mux && name != "kitex":
		fatal("-mux is for -fw kitex")
	case *mux:
		name = "kitex-mux"
	}
	s, err := peer.StartServer(name, *addr, peer.ServerConfig{Loops: *loops})
	if err != nil {
		fatal(err.Error())
	}
	fmt.Printf("echoserver: fw=%s addr=%s pid=%d\n", name, s.Addr(), os.Getpid())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(*lifetime):
	}
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
	os.Exit(0)
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "echoserver:", msg)
	os.Exit(1)
}
