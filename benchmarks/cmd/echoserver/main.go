// Command echoserver runs one framework's echo server (method Echo; TARS servant
// Bench.EchoServer.EchoObj) until it is interrupted or -lifetime passes.
//
//	go run ./cmd/echoserver -fw tarscomm -addr 127.0.0.1:18000
//	go run ./cmd/echoserver -fw kitex -mux -addr 127.0.0.1:0
//
// -fw is tarscomm, tarsgo, grpc, kitex or stdlib (the floor: a minimal multiplexed TARS server
// on the standard library); -mux (kitex) serves Kitex's multiplexed transport. Port 0 picks a
// free port. Once the server accepts connections it prints one line:
//
//	echoserver: fw=tarscomm addr=127.0.0.1:18000 pid=1234
//
// Each line "stats" on its standard input is answered on its standard output with the
// process's heap allocations so far (runtime.MemStats' Mallocs and TotalAlloc), which the
// driver reads before and after each measured phase:
//
//	ALLOC mallocs=123456 bytes=7890123
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

func main() {
	fw := flag.String("fw", "tarscomm", "server framework: tarscomm, tarsgo, grpc, kitex or stdlib")
	addr := flag.String("addr", "127.0.0.1:18000", "listen address host:port (port 0: a free port)")
	mux := flag.Bool("mux", false, "kitex: multiplexed transport")
	loops := flag.Int("loops", 0, "tarscomm: event loops (0: GOMAXPROCS)")
	lifetime := flag.Duration("lifetime", time.Hour, "exit by itself after this long")
	flag.Parse()

	name := *fw
	switch {
	case !slices.Contains([]string{"tarscomm", "tarsgo", "grpc", "kitex", "stdlib"}, name):
		fatal(fmt.Sprintf("unknown -fw %q: want tarscomm, tarsgo, grpc, kitex or stdlib", name))
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
	go answerStats()

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

// answerStats answers each line "stats" on stdin with an ALLOC line on stdout, until stdin
// ends.
func answerStats() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "stats" {
			continue
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Println(result.Alloc{Mallocs: ms.Mallocs, Bytes: ms.TotalAlloc})
	}
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "echoserver:", msg)
	os.Exit(1)
}
