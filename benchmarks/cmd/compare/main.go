// Command compare runs the side-by-side benchmark (`make bench-compare` at the root): it
// builds cmd/echoserver and cmd/loadgen, starts every framework's echo server as its own
// process on a free loopback port, and runs the load generator for each client/server pair
// over two matrices, interleaving the pairs over several rounds:
//
//   - the main matrix, every pair at c ∈ {1, 64, 512, 4096} × payload ∈ {128 B, 4 KiB};
//   - then the large-payload matrix, each framework on its own server (the floor: the stdlib
//     client on the stdlib server) and the stdlib client on tarscomm's server, at
//     c ∈ {4, 64} × payload ∈ {64 KiB, 1 MiB, 8 MiB}, with shorter runs and a longer call
//     timeout.
//
// It writes RESULTS.md (medians, ratios to tarscomm, the issues' targets as PASS/FAIL, every
// raw result) and two charts, qps_128.png and p99_128.png. The "## Log" section at the end of
// RESULTS.md is kept from one run to the next.
//
// Run it from benchmarks/:
//
//	go run ./cmd/compare                  # both matrices, 3 rounds each: about 17 minutes on 2 cores
//	go run ./cmd/compare -quick           # 1 round each, shorter runs: about 4 minutes
//	go run ./cmd/compare -quick -sizes none -out /tmp/large.md   # the large cells only: about 2 minutes
//	go run ./cmd/compare -rows tarscomm@tarscomm,kitex-mux@kitex-mux -c 64,512 -sizes 128 -rounds 5 -large-sizes none
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
	rounds := flag.Int("rounds", 3, "main matrix: rounds (medians are taken over them)")
	d := flag.Duration("d", 2*time.Second, "main matrix: measured phase of each run")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "main matrix: warm-up of each run")
	timeout := flag.Duration("timeout", time.Second, "main matrix: timeout of each call")
	cs := flag.String("c", "1,64,512,4096", "main matrix: concurrency levels")
	sizes := flag.String("sizes", "128,4096", "main matrix: payload sizes in bytes (none: no main matrix)")
	rows := flag.String("rows", "all", "main matrix: client@server pairs, comma-separated (all: every default pair)")

	lRounds := flag.Int("large-rounds", 3, "large-payload matrix: rounds")
	lD := flag.Duration("large-d", time.Second, "large-payload matrix: measured phase of each run")
	lWarmup := flag.Duration("large-warmup", 500*time.Millisecond, "large-payload matrix: warm-up of each run")
	lTimeout := flag.Duration("large-timeout", 10*time.Second, "large-payload matrix: timeout of each call")
	lCs := flag.String("large-c", ints2s(compare.DefaultLargeCs), "large-payload matrix: concurrency levels")
	lSizes := flag.String("large-sizes", ints2s(compare.DefaultLargeSizes), "large-payload matrix: payload sizes in bytes (none: no large matrix)")
	lRows := flag.String("large-rows", "all", "large-payload matrix: client@server pairs (all: "+rows2s(compare.DefaultLargeRows)+")")

	quick := flag.Bool("quick", false, "a quick look: 1 round of each matrix, -d 1s, -warmup 300ms, -large-warmup 300ms (unless given)")
	out := flag.String("out", "RESULTS.md", "the report; charts go beside it")
	flag.Parse()

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		for name, p := range map[string]*int{"rounds": rounds, "large-rounds": lRounds} {
			if !set[name] {
				*p = 1
			}
		}
		if !set["d"] {
			*d = time.Second
		}
		for name, p := range map[string]*time.Duration{"warmup": warmup, "large-warmup": lWarmup} {
			if !set[name] {
				*p = 300 * time.Millisecond
			}
		}
	}
	var plan compare.Plan
	var err error
	plan.Matrix, err = matrix(*rows, compare.DefaultRows, *cs, *sizes, *rounds, compare.Timing{Duration: *d, Warmup: *warmup, Timeout: *timeout})
	if err != nil {
		fatal(err)
	}
	plan.Large, err = matrix(*lRows, compare.DefaultLargeRows, *lCs, *lSizes, *lRounds, compare.Timing{Duration: *lD, Warmup: *lWarmup, Timeout: *lTimeout})
	if err != nil {
		fatal(err)
	}
	if err := plan.Validate(); err != nil {
		fatal(err)
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
		Dir:     dir,
		Go:      goCmd,
		Plan:    plan,
		Out:     *out,
		Command: command(),
	})
	if err != nil {
		fatal(err)
	}
}

// matrix builds one matrix from its flags; sizes "none" (or "") makes it empty.
func matrix(rows string, all []compare.Row, cs, sizes string, rounds int, t compare.Timing) (compare.Matrix, error) {
	m := compare.Matrix{Rounds: rounds, Timing: t}
	if sizes == "" || sizes == "none" {
		return m, nil
	}
	if rounds < 1 {
		return m, fmt.Errorf("need rounds ≥ 1 (have %d)", rounds)
	}
	var err error
	if rows == "" || rows == "all" {
		m.Rows = append([]compare.Row(nil), all...)
	} else if m.Rows, err = compare.ParseRows(rows); err != nil {
		return m, err
	}
	if m.Cs, err = ints(cs); err != nil {
		return m, err
	}
	if m.Sizes, err = ints(sizes); err != nil {
		return m, err
	}
	return m, nil
}

func ints2s(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func rows2s(rows []compare.Row) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = r.Client + "@" + r.Server
	}
	return strings.Join(parts, ",")
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
