// Command tlscells measures the TLS cells of issue 13: tarscomm and gRPC-go, each over plain TCP
// and over TLS 1.3 against its own server, at c = 64 with 128 B and 64 KiB payloads, and checks
// the targets: tarscomm over TLS at least 2x gRPC-go over TLS, and at least 50% of tarscomm's
// own plain-TCP QPS.
//
//	go run ./cmd/tlscells [-rounds 3] [-d 2s] [-warmup 500ms] [-c 64] [-sizes 128,65536]
//
// Every run is two processes, as in cmd/compare: the echo server (this command with -serve)
// and the closed-loop load generator (this command with -load), which prints loadgen's RESULT
// line. Pairs run in turn within each round, so that the machine's drift spreads over all of
// them; the table holds medians over the rounds. Certificates are made once in peer.TLSDir.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/loadgen"
	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

// pairs are the frameworks measured, each against its own server.
var pairs = []string{"tarscomm", "tarscomm-tls", "grpc", "grpc-tls"}

func main() {
	serve := flag.String("serve", "", "internal: run this echo server and print its address")
	load := flag.String("load", "", "internal: run this client against -addr and print a RESULT line")
	addr := flag.String("addr", "", "internal: server address for -load")
	srvpid := flag.Int("srvpid", 0, "internal: server pid for -load")
	rounds := flag.Int("rounds", 3, "rounds of every cell")
	d := flag.Duration("d", 2*time.Second, "measured phase of a run")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "warm-up of a run")
	timeout := flag.Duration("timeout", 2*time.Second, "call timeout")
	c := flag.Int("c", 64, "concurrent callers")
	sizes := flag.String("sizes", "128,65536", "payload sizes, comma-separated")
	flag.Parse()

	switch {
	case *serve != "":
		runServer(*serve)
	case *load != "":
		runLoad(*load, *addr, *srvpid, *c, *d, *warmup, *timeout, firstSize(*sizes))
	default:
		os.Exit(drive(*rounds, *c, *d, *warmup, *timeout, *sizes))
	}
}

func firstSize(s string) int {
	n, err := strconv.Atoi(strings.Split(s, ",")[0])
	if err != nil {
		fatal("bad -sizes %q", s)
	}
	return n
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tlscells: "+format+"\n", args...)
	os.Exit(1)
}

func runServer(name string) {
	s, err := peer.StartServer(name, "127.0.0.1:0", peer.ServerConfig{})
	if err != nil {
		fatal("%v", err)
	}
	fmt.Printf("tlscells: addr=%s pid=%d\n", s.Addr(), os.Getpid())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(time.Hour):
	}
	os.Exit(0)
}

func runLoad(name, addr string, srvpid, c int, d, warmup, timeout time.Duration, size int) {
	res, err := loadgen.Run(loadgen.Config{
		Client: name,
		Peer:   peer.ClientConfig{Addrs: []string{addr}, Timeout: timeout},
		C:      c, Duration: d, Size: size, Warmup: warmup, SrvPID: srvpid, Log: os.Stderr,
	})
	if err != nil {
		fatal("%v", err)
	}
	fmt.Println(res.String())
	os.Exit(0)
}

// drive runs the matrix and prints it; the exit status is 1 if a target fails or a run fails.
func drive(rounds, c int, d, warmup, timeout time.Duration, sizeList string) int {
	self, err := os.Executable()
	if err != nil {
		fatal("%v", err)
	}
	var sizes []int
	for _, f := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			fatal("bad -sizes %q", sizeList)
		}
		sizes = append(sizes, n)
	}
	qps := map[string][]float64{}   // pair/size -> QPS of each round
	p99 := map[string][]float64{}   // pair/size -> p99 µs of each round
	alloc := map[string][]float64{} // pair/size -> bytes per call
	failed := false
	for round := range rounds {
		for _, size := range sizes {
			for i := range pairs {
				pair := pairs[(i+round)%len(pairs)]
				r, err := once(self, pair, c, d, warmup, timeout, size)
				key := pair + "/" + strconv.Itoa(size)
				if err != nil {
					fmt.Fprintf(os.Stderr, "tlscells: %s: %v\n", key, err)
					failed = true
					continue
				}
				fmt.Fprintln(os.Stderr, r.String())
				qps[key] = append(qps[key], r.QPS)
				p99[key] = append(p99[key], r.P99)
				alloc[key] = append(alloc[key], float64(r.BytesPerCall))
			}
		}
	}
	fmt.Printf("TLS cells, c=%d, %d rounds of %v (medians; TLS 1.3, ECDSA P-256, each framework against its own server)\n\n", c, rounds, d)
	fmt.Println("| pair | size | QPS | p99 µs | B/call | vs own plain TCP |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, size := range sizes {
		for _, pair := range pairs {
			key := pair + "/" + strconv.Itoa(size)
			own := median(qps[strings.TrimSuffix(pair, "-tls")+"/"+strconv.Itoa(size)])
			fmt.Printf("| %s | %d | %.0f | %.1f | %.0f | %.0f%% |\n", pair, size, median(qps[key]), median(p99[key]), median(alloc[key]), 100*median(qps[key])/own)
		}
	}
	fmt.Println()
	for _, size := range sizes {
		s := "/" + strconv.Itoa(size)
		tt, gt, tp := median(qps["tarscomm-tls"+s]), median(qps["grpc-tls"+s]), median(qps["tarscomm"+s])
		for _, check := range []struct {
			what string
			ok   bool
			val  string
		}{
			{"tarscomm-tls >= 2x grpc-tls", tt >= 2*gt, fmt.Sprintf("%.2fx", tt/gt)},
			{"tarscomm-tls >= 50% of tarscomm plain", tt >= tp/2, fmt.Sprintf("%.0f%%", 100*tt/tp)},
		} {
			verdict := "PASS"
			if !check.ok {
				verdict, failed = "FAIL", true
			}
			fmt.Printf("%s size=%d: %s (%s)\n", verdict, size, check.what, check.val)
		}
	}
	if failed {
		return 1
	}
	return 0
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// once runs one cell: a server process and a load process.
func once(self, pair string, c int, d, warmup, timeout time.Duration, size int) (result.Result, error) {
	srv := exec.Command(self, "-serve", pair)
	srv.Stderr = os.Stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		return result.Result{}, err
	}
	if err := srv.Start(); err != nil {
		return result.Result{}, err
	}
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return result.Result{}, fmt.Errorf("server %s: %w", pair, err)
	}
	var addr string
	var pid int
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "tlscells: addr=%s pid=%d", &addr, &pid); err != nil {
		return result.Result{}, fmt.Errorf("server %s said %q", pair, line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), warmup+d+timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-load", pair, "-addr", addr, "-srvpid", strconv.Itoa(pid),
		"-c", strconv.Itoa(c), "-d", d.String(), "-warmup", warmup.String(), "-timeout", timeout.String(),
		"-sizes", strconv.Itoa(size))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return result.Result{}, fmt.Errorf("load %s: %v: %s", pair, err, stderr.String())
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(l, result.Prefix) {
			return result.Parse(l)
		}
	}
	return result.Result{}, fmt.Errorf("load %s: no result in %q", pair, stdout.String())
}
