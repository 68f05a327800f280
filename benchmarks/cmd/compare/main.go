// Command compare runs the side-by-side benchmark (`make bench-compare` at the root): it
// builds cmd/echoserver and cmd/loadgen, starts every framework's echo server as its own
// process on a free loopback port, runs the load generator for each client/server pair over
// c ∈ {1, 64, 512, 4096} × payload ∈ {128 B, 4 KiB}, interleaving the pairs over several
// rounds, and writes RESULTS.md (medians, ratios to tarscomm, the targets, every raw
// result) and two charts, qps_128.png and p99_128.png. The "## Log" section at the end of
// RESULTS.md is kept from one run to the next.
//
// Run it from benchmarks/:
//
//	go run ./cmd/compare                  # the full matrix, 3 rounds: about 10 minutes on 2 cores
//	go run ./cmd/compare -quick           # 1 round, shorter runs: about 2 minutes
//	go run ./cmd/compare -rows tarscomm@tarscomm,kitex-mux@kitex-mux -c 64,512 -sizes 128 -rounds 5
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/compare"
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds over the whole matrix (medians are taken over them)")
	d := flag.Duration("d", 2*time.Second, "measured phase of each run")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "warm-up of each run")
	timeout := flag.Duration("timeout", time.Second, "timeout of each call")
	cs := flag.String("c", "1,64,512,4096", "concurrency levels")
	sizes := flag.String("sizes", "128,4096", "payload sizes in bytes")
	rows := flag.String("rows", "all", "client@server pairs, comma-separated (all: every default pair)")
	quick := flag.Bool("quick", false, "a quick look: 1 round, -d 1s, -warmup 300ms (unless given)")
	out := flag.String("out", "RESULTS.md", "the report; charts go beside it")
	flag.Parse()

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["rounds"] {
			*rounds = 1
		}
		if !set["d"] {
			*d = time.Second
		}
		if !set["warmup"] {
			*warmup = 300 * time.Millisecond
		}
	}
	plan := compare.Plan{Rounds: *rounds}
	var err error
	if plan.Rows, err = compare.ParseRows(*rows); err != nil {
		fatal(err)
	}
	if plan.Cs, err = ints(*cs); err != nil {
		fatal(err)
	}
	if plan.Sizes, err = ints(*sizes); err != nil {
		fatal(err)
	}
	if *rounds < 1 || *d <= 0 {
		fatal(fmt.Errorf("need -rounds ≥ 1 and -d > 0"))
	}
	dir, err := os.Getwd()
	if err != nil {
		fatal(err)
	}
	if _, err := os.Stat("cmd/loadgen"); err != nil {
		fatal(fmt.Errorf("run from the benchmarks directory (cmd/loadgen not found)"))
	}
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	err = compare.Main(compare.Options{
		Dir:      dir,
		Go:       goCmd,
		Plan:     plan,
		Duration: *d,
		Warmup:   *warmup,
		Timeout:  *timeout,
		Out:      *out,
		Command:  command(),
	})
	if err != nil {
		fatal(err)
	}
}

// command is how this run was started, as Markdown for the report.
func command() string {
	args := strings.Join(os.Args[1:], " ")
	direct := "`" + strings.TrimSpace("cd benchmarks && go run ./cmd/compare "+args) + "`"
	switch {
	case os.Getenv("MAKELEVEL") == "":
		return direct
	case args == "":
		return "`make bench-compare`, which runs " + direct
	}
	return "`make bench-compare BENCH_ARGS='" + args + "'`, which runs " + direct
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad number %q in %q", f, s)
		}
		out = append(out, n)
	}
	return out, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(1)
}
