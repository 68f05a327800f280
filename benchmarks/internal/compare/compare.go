package compare

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/procstat"
)

// Options configures a comparison.
type Options struct {
	Dir     string    // the benchmarks module (where cmd/ is)
	Bin     string    // where the binaries are built; default Dir/bin
	Go      string    // the go command; default "go"
	Plan    Plan      // the matrices, with each one's timing
	Out     string    // the report; default Dir/RESULTS.md
	Charts  string    // directory of the PNG charts; default Dir
	Command string    // how the run was started, as Markdown, recorded in the report
	Log     io.Writer // progress; default os.Stdout
}

func (o *Options) defaults() {
	if o.Bin == "" {
		o.Bin = filepath.Join(o.Dir, "bin")
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Dir, "RESULTS.md")
	}
	if o.Charts == "" {
		o.Charts = filepath.Dir(o.Out)
	}
	if o.Log == nil {
		o.Log = os.Stdout
	}
}

// Estimate is how long the runs should take, from the plan and per-run durations (builds
// not included).
func Estimate(o Options) time.Duration {
	var d time.Duration
	for _, r := range o.Plan.Runs() {
		d += r.Timing.Warmup + r.Timing.Duration + runOverhead(r.Cell)
	}
	return d
}

// runOverhead is what a run takes beyond its warm-up and measured phase: process start,
// connect, the calls in flight at the end (long ones with large payloads), exit, and for a
// large payload the restart of its server.
func runOverhead(cell Cell) time.Duration {
	if cell.Size >= FreshSize {
		return time.Second
	}
	return 300 * time.Millisecond
}

// FreshSize is the payload from which every run gets a server started for it: a server that has
// just answered a run of 8 MiB calls holds a heap grown to a gigabyte, which the runtime gives
// back over the following seconds, and the next run of 1 MiB calls measures that as much as the
// server (on one tarscomm server, 1 MiB c=64 runs one after another read 1,005, then after an
// 8 MiB run 957, 801, 1,045 and 587 calls/s). Small payloads share their servers: their runs
// leave nothing behind that lasts.
const FreshSize = 1 << 20

// Main builds the commands, starts the servers, runs the plan and writes the report and
// charts. Servers are stopped when it returns, or when the driver is interrupted.
func Main(o Options) error {
	o.defaults()
	rep := &Report{Options: o, Start: time.Now()}
	rep.LoadStart, _ = procstat.LoadAvg()
	if err := o.Plan.Validate(); err != nil {
		return err
	}
	runs := o.Plan.Runs()
	var parts []string
	for _, m := range o.Plan.Matrices() {
		parts = append(parts, fmt.Sprintf("%d pairs × %d cells × %d rounds", len(m.Rows), len(m.Cs)*len(m.Sizes), m.Rounds))
	}
	fmt.Fprintf(o.Log, "compare: %d runs (%s), about %v plus builds\n",
		len(runs), strings.Join(parts, ", then "), Estimate(o).Round(time.Second))

	fmt.Fprintf(o.Log, "compare: building echoserver and loadgen into %s\n", o.Bin)
	if err := build(o.Go, o.Dir, o.Bin, o.Log); err != nil {
		return err
	}

	// Servers outlive nothing: they exit by themselves after this, whatever happens here.
	lifetime := 2*Estimate(o) + 10*time.Minute
	var mu sync.Mutex
	servers := make(map[string]*serverProc)
	stopAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range servers {
			s.stop()
		}
	}
	defer stopAll()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			fmt.Fprintln(o.Log, "compare: interrupted; stopping the servers")
			stopAll()
			os.Exit(1)
		}
	}()
	start := func(name string, quiet bool) (*serverProc, error) {
		s, err := startServer(o.Bin, name, lifetime, os.Stderr)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		servers[name] = s
		mu.Unlock()
		if !quiet {
			fmt.Fprintf(o.Log, "compare: server %-9s on %s (pid %d)\n", name, s.addr, s.pid)
		}
		return s, nil
	}
	for _, name := range o.Plan.Servers() {
		if _, err := start(name, false); err != nil {
			return err
		}
	}

	began := time.Now()
	for i, run := range runs {
		mu.Lock()
		srv := servers[run.Row.Server]
		mu.Unlock()
		if !srv.alive() {
			note := fmt.Sprintf("server %s (pid %d) had exited before run %d (round %d, %s, c=%d, %d B); restarted",
				srv.name, srv.pid, i+1, run.Round, run.Row.Name(), run.Cell.C, run.Cell.Size)
			rep.Notes = append(rep.Notes, note)
			fmt.Fprintln(o.Log, "compare:", note)
			var err error
			if srv, err = start(run.Row.Server, false); err != nil {
				return err
			}
		} else if run.Cell.Size >= FreshSize {
			srv.stop()
			var err error
			if srv, err = start(run.Row.Server, true); err != nil {
				return err
			}
		}
		out := runLoadgen(o, run, srv)
		rep.Outcomes = append(rep.Outcomes, out)
		left := time.Duration(float64(time.Since(began)) / float64(i+1) * float64(len(runs)-i-1))
		fmt.Fprintf(o.Log, "[%3d/%d] round %d c=%-4d %7s %-26s %s  (about %v left)\n",
			i+1, len(runs), run.Round, run.Cell.C, fmtSize(run.Cell.Size), run.Row.Name(), brief(out), left.Round(time.Second))
	}
	stopAll()
	rep.End = time.Now()
	rep.LoadEnd, _ = procstat.LoadAvg()
	if err := rep.WriteCharts(); err != nil {
		return err
	}
	if err := rep.Write(); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "compare: wrote %s and charts in %v\n", o.Out, rep.End.Sub(rep.Start).Round(time.Second))
	return nil
}

func brief(o Outcome) string {
	if !o.OK {
		return "FAILED: " + firstLine(o.Note)
	}
	r := o.Result
	s := fmt.Sprintf("qps=%-8.0f p50=%7.0fµs p99=%7.0fµs allocs=%5.1f", r.QPS, r.P50, r.P99, r.AllocsPerCall)
	if r.Errs > 0 {
		s += fmt.Sprintf(" ERRORS=%d", r.Errs)
	}
	return s
}
