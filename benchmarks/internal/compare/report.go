package compare

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is everything a comparison writes down.
type Report struct {
	Options   Options
	Start     time.Time
	End       time.Time
	LoadStart [3]float64
	LoadEnd   [3]float64
	Outcomes  []Outcome
	Notes     []string // server restarts and the like
}

// logHeading starts the section of RESULTS.md that the driver keeps from one run to the next.
const logHeading = "## Log"

const defaultLog = logHeading + `

What each change to the hot path bought, newest first: date, commit, the change, and its
effect on the table above (the same cells, same machine, noted load). This section is kept
as it is when ` + "`make bench-compare`" + ` rewrites the rest of the file.
`

// keptLog returns the "## Log" section of the existing report at path, or a fresh one.
func keptLog(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return defaultLog, nil
	}
	if err != nil {
		return "", err
	}
	s := string(b)
	if strings.HasPrefix(s, logHeading+"\n") {
		return s, nil
	}
	if i := strings.Index(s, "\n"+logHeading+"\n"); i >= 0 {
		return s[i+1:], nil
	}
	return defaultLog, nil
}

// reference is the row a row's ratios are taken against: tarscomm's sync client on the same
// server when that server is a TARS framework's (tarscomm's, TarsGo's), else tarscomm's client
// on tarscomm's server (gRPC, Kitex, and the floor's stdlib server).
func reference(r Row) Row {
	if r.Server == "tarscomm" || r.Server == "tarsgo" {
		return Row{"tarscomm", r.Server}
	}
	return Row{"tarscomm", "tarscomm"}
}

// Write writes the report to Options.Out, keeping its "## Log" section.
func (rep *Report) Write() error {
	o := rep.Options
	log, err := keptLog(o.Out)
	if err != nil {
		return err
	}
	stats := Aggregate(rep.Outcomes)
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# Benchmarks: tarscomm against TarsGo, gRPC-go and Kitex\n\n")
	w("Written by `make bench-compare` (`benchmarks/cmd/compare`); everything above \"%s\" is rewritten\n", logHeading)
	w("by the next run. Each framework's echo server and the load generator run as separate\n")
	w("processes on this machine, over loopback; see benchmarks/README.md for what each client does.\n\n")
	w("- Command: %s\n", o.Command)
	w("- When: %s, %v in all\n", rep.Start.UTC().Format("2006-01-02 15:04 MST"), rep.End.Sub(rep.Start).Round(time.Second))
	w("- Machine: %s, %d cores, Linux %s, %s\n", cpuModel(), runtime.NumCPU(), kernel(), runtime.Version())
	w("- Load average (1, 5, 15 min): %s at the start, %s at the end", fmtLoad(rep.LoadStart), fmtLoad(rep.LoadEnd))
	if rep.LoadStart[0] > 1 || rep.LoadEnd[0] > 1 {
		w(" (other work was running: numbers are noisy)")
	}
	w("\n")
	for _, nm := range []struct {
		name string
		m    Matrix
	}{{"Main matrix", o.Plan.Matrix}, {"Large-payload matrix", o.Plan.Large}} {
		if m := nm.m; !m.Empty() {
			w("- %s (%s; c = %s; %d pairs): each run %v measured after %v of warm-up, %v timeout per call; %d round(s)\n",
				nm.name, joinSizes(m.Sizes), joinInts(m.Cs), len(m.Rows), m.Duration, m.Warmup, m.Timeout, m.Rounds)
			for _, size := range m.Sizes {
				for _, c := range m.Cs {
					if t := m.Timing.For(Cell{c, size}); t != m.Timing {
						w("  - c=%d, %s (%d MiB in flight): %v measured after %v of warm-up\n", c, fmtSize(size), c*size>>20, t.Duration, t.Warmup)
					}
				}
			}
		}
	}
	w("- Within each cell the pairs run one after the other, round-robin from one round to the next; medians\n")
	w("  over the rounds, errors summed\n")
	w("- Every run of %s or more starts on a server started for it, so that no run meets a heap an earlier\n", fmtSize(FreshSize))
	w("  run grew\n")
	for _, n := range rep.Notes {
		w("- Note: %s\n", n)
	}
	w("\n")
	w("Columns: QPS of successful calls; latency percentiles in µs; heap allocations per call in\n")
	w("the client process (runtime.MemStats: objects, and bytes with their ratio to the payload); CPU\n")
	w("per call (user + system) of the client process (getrusage) and of the server process\n")
	w("(/proc/PID/stat); heap bytes the server process allocated per call (runtime.MemStats'\n")
	w("TotalAlloc, read from the server at both edges of the measured phase); errors = failed calls\n")
	w("plus replies that did not echo the request, summed over the rounds. ×tc = ratio to tarscomm's\n")
	w("sync client on the same server (tarscomm's, TarsGo's) or on tarscomm's server (the others).\n")
	w("The floor is `stdlib → stdlib`: a minimal multiplexed TARS client and server on the standard\n")
	w("library, no framework at either end (benchmarks/README.md).\n\n")

	w("## Targets\n\n")
	w("### Issue 5 (main matrix, 128 B unless said)\n\n")
	w("| target | measured | met |\n|---|---|---|\n")
	main := []check{{"issue 5's targets", "not in this run (no main matrix)", -1}}
	if !o.Plan.Matrix.Empty() {
		main = targets(stats, o.Plan.Matrix)
	}
	for _, c := range main {
		w("| %s | %s | %s |\n", c.target, c.measured, c.verdict())
	}
	w("\n")
	w("### Issue 9: large payloads (%s against %s and %s)\n\n", rowTC.Name(), rowStdlib.Name(), rowGRPC.Name())
	w("| target | measured | met |\n|---|---|---|\n")
	for _, c := range largeTargets(stats, o.Plan.Large) {
		w("| %s | %s | %s |\n", c.target, c.measured, c.verdict())
	}
	w("\n")
	w("### Issue 18: wire speed at both ends (%s against the floor, %s, and %s)\n\n", rowTC.Name(), rowFloor.Name(), rowGRPC.Name())
	w("| target | measured | met |\n|---|---|---|\n")
	for _, c := range floorTargets(stats) {
		w("| %s | %s | %s |\n", c.target, c.measured, c.verdict())
	}
	w("\n")

	for _, m := range o.Plan.Matrices() {
		for _, size := range m.Sizes {
			w("## %s payload\n\n", fmtSize(size))
			w("| c | client → server | QPS | ×tc | p50 µs | p99 µs | p99 ×tc | allocs/call | bytes/call | client CPU µs/call | CPU ×tc | server CPU µs/call | server bytes/call | errors |\n")
			w("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, c := range m.Cs {
				for _, row := range m.Rows {
					st := stats.Get(row, Cell{c, size})
					if st == nil {
						continue
					}
					ref := stats.Get(reference(row), Cell{c, size})
					w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
						c, row.Name(), fmtQPS(st.QPS), ratio(st, ref, func(s *Stat) float64 { return s.QPS }),
						fmtUS(st.P50), fmtUS(st.P99), ratio(st, ref, func(s *Stat) float64 { return s.P99 }),
						fmtNum(st.Allocs, 1), fmtBytesPerCall(st.Bytes, size), fmtNum(st.ClientCPU, 1),
						ratio(st, ref, func(s *Stat) float64 { return s.ClientCPU }), fmtNum(st.ServerCPU, 1),
						fmtBytesPerCall(st.ServerBytes, size), fmtErrs(st))
				}
			}
			w("\n")
		}
	}

	if !o.Plan.Matrix.Empty() && slices.Contains(o.Plan.Sizes, chartSize) {
		w("## Charts (128 B)\n\n")
		w("![QPS against concurrency](%s)\n\n![p99 latency against concurrency](%s)\n\n", chartQPS, chartP99)
	}

	w("## Every run\n\n<details><summary>%d RESULT lines, in the order they ran</summary>\n\n```\n", len(rep.Outcomes))
	for _, out := range rep.Outcomes {
		if out.OK {
			w("round=%d server=%s %s%s\n", out.Run.Round, out.Run.Row.Server, out.Result.String(), fmtServerAllocs(out))
		} else {
			w("round=%d server=%s client=%s c=%d size=%d FAILED: %s\n", out.Run.Round, out.Run.Row.Server,
				out.Run.Row.Client, out.Run.Cell.C, out.Run.Cell.Size, firstLine(out.Note))
		}
	}
	w("```\n\n</details>\n\n")
	var noted []Outcome
	for _, out := range rep.Outcomes {
		if out.Note != "" {
			noted = append(noted, out)
		}
	}
	if len(noted) > 0 {
		w("<details><summary>What the load generator said about errors (%d runs)</summary>\n\n```\n", len(noted))
		for _, out := range noted {
			w("round %d, %s, c=%d, %d B:\n", out.Run.Round, out.Run.Row.Name(), out.Run.Cell.C, out.Run.Cell.Size)
			for _, l := range firstLines(out.Note, 4) {
				w("  %s\n", l)
			}
		}
		w("```\n\n</details>\n\n")
	}
	b.WriteString(log)
	return os.WriteFile(o.Out, b.Bytes(), 0o644)
}

// check is one of the targets with what was measured.
type check struct {
	target   string
	measured string
	met      int // 1 met, 0 not met, -1 not measured
}

func (c check) verdict() string {
	switch c.met {
	case 1:
		return "PASS"
	case 0:
		return "**FAIL**"
	}
	return "not measured"
}

func verdict(ok bool) int {
	if ok {
		return 1
	}
	return 0
}

var (
	rowTC      = Row{"tarscomm", "tarscomm"}
	rowTCAsync = Row{"tarscomm-async", "tarscomm"}
	rowStdlib  = Row{"stdlib", "tarscomm"}
	rowTG      = Row{"tarsgo", "tarsgo"}
	rowTCOnTG  = Row{"tarscomm", "tarsgo"}
	rowKitex   = Row{"kitex", "kitex"}
	rowKitexMx = Row{"kitex-mux", "kitex-mux"}
	rowGRPC    = Row{"grpc", "grpc"}
	rowFloor   = Row{"stdlib", "stdlib"}
)

// kitexBest returns the Kitex mode with the higher QPS in cell.
func kitexBest(s Stats, cell Cell) *Stat {
	a, b := s.Get(rowKitex, cell), s.Get(rowKitexMx, cell)
	if a == nil || b != nil && b.QPS > a.QPS {
		return b
	}
	return a
}

func kitexLabel(st *Stat) string {
	if st.Row.Client == "kitex-mux" {
		return "Kitex mux"
	}
	return "Kitex pool"
}

// targets evaluates issue 5's targets on the medians of the main matrix m.
func targets(s Stats, m Matrix) []check {
	var out []check
	missing := func(t string) { out = append(out, check{t, "not in this run", -1}) }
	for _, c := range []int{64, 512} {
		cell := Cell{c, 128}
		tc, kb, tg := s.Get(rowTC, cell), kitexBest(s, cell), s.Get(rowTG, cell)
		t := fmt.Sprintf("c=%d: QPS ≥ 2× Kitex's best mode", c)
		if tc == nil || kb == nil {
			missing(t)
		} else {
			r := tc.QPS / kb.QPS
			out = append(out, check{t, fmt.Sprintf("%s vs %s %s: %.2f×", fmtQPS(tc.QPS), kitexLabel(kb), fmtQPS(kb.QPS), r), verdict(r >= 2)})
		}
		t = fmt.Sprintf("c=%d: QPS ≥ 3× TarsGo", c)
		if tc == nil || tg == nil {
			missing(t)
		} else {
			r := tc.QPS / tg.QPS
			out = append(out, check{t, fmt.Sprintf("%s vs %s: %.2f×", fmtQPS(tc.QPS), fmtQPS(tg.QPS), r), verdict(r >= 3)})
		}
	}
	for _, c := range []int{64, 512} {
		cell := Cell{c, 4096}
		tc, kb := s.Get(rowTC, cell), kitexBest(s, cell)
		t := fmt.Sprintf("4 KiB, c=%d: QPS ≥ 1.5× Kitex's best mode", c)
		if tc == nil || kb == nil {
			missing(t)
			continue
		}
		r := tc.QPS / kb.QPS
		out = append(out, check{t, fmt.Sprintf("%s vs %s %s: %.2f×", fmtQPS(tc.QPS), kitexLabel(kb), fmtQPS(kb.QPS), r), verdict(r >= 1.5)})
	}
	{
		cell := Cell{512, 128}
		tc, kb := s.Get(rowTC, cell), kitexBest(s, cell)
		t := "c=512: p99 ≤ 0.5× Kitex's (best mode)"
		if tc == nil || kb == nil {
			missing(t)
		} else {
			r := tc.P99 / kb.P99
			out = append(out, check{t, fmt.Sprintf("%s µs vs %s %s µs: %.2f×", fmtUS(tc.P99), kitexLabel(kb), fmtUS(kb.P99), r), verdict(r <= 0.5)})
		}
	}
	{
		cell := Cell{1, 128}
		tc, sl := s.Get(rowTC, cell), s.Get(rowStdlib, cell)
		t := "c=1: p50 ≤ 1.2× the stdlib client's"
		if tc == nil || sl == nil {
			missing(t)
		} else {
			r := tc.P50 / sl.P50
			out = append(out, check{t, fmt.Sprintf("%s µs vs %s µs: %.2f×", fmtUS(tc.P50), fmtUS(sl.P50), r), verdict(r <= 1.2)})
		}
	}
	for _, a := range []struct {
		row   Row
		limit float64
		what  string
	}{{rowTC, 4, "sync"}, {rowTCAsync, 5, "async"}} {
		t := fmt.Sprintf("allocations ≤ %.0f per %s call (every cell)", a.limit, a.what)
		worst, where := math.NaN(), ""
		for k, st := range s {
			if k.row == a.row && slices.Contains(m.Sizes, k.cell.Size) && !math.IsNaN(st.Allocs) && !(st.Allocs <= worst) {
				worst, where = st.Allocs, fmt.Sprintf("c=%d, %s", k.cell.C, fmtSize(k.cell.Size))
			}
		}
		if math.IsNaN(worst) {
			missing(t)
			continue
		}
		out = append(out, check{t, fmt.Sprintf("at most %.2f (%s)", worst, where), verdict(worst <= a.limit)})
	}
	for _, c := range []int{64, 512} {
		cell := Cell{c, 128}
		tc, kb := s.Get(rowTC, cell), kitexBest(s, cell)
		t := fmt.Sprintf("c=%d: client CPU per call ≤ 0.5× Kitex's (best mode)", c)
		if tc == nil || kb == nil {
			missing(t)
			continue
		}
		r := tc.ClientCPU / kb.ClientCPU
		out = append(out, check{t, fmt.Sprintf("%.1f µs vs %s %.1f µs: %.2f×", tc.ClientCPU, kitexLabel(kb), kb.ClientCPU, r), verdict(r <= 0.5)})
	}
	for _, c := range []int{64, 512} {
		cell := Cell{c, 128}
		tc, tg := s.Get(rowTCOnTG, cell), s.Get(rowTG, cell)
		t := fmt.Sprintf("c=%d, TarsGo server: tarscomm client CPU ≤ 1/3 of TarsGo's client", c)
		if tc == nil || tg == nil {
			missing(t)
			continue
		}
		r := tc.ClientCPU / tg.ClientCPU
		out = append(out, check{t, fmt.Sprintf("%.1f µs vs %.1f µs: %.2f×", tc.ClientCPU, tg.ClientCPU, r), verdict(r <= 1.0/3)})
	}
	{
		t := "c=4096 without errors (tarscomm sync and async, both sizes)"
		var errs, calls uint64
		failed, cells := 0, 0
		for k, st := range s {
			if k.cell.C == 4096 && (k.row == rowTC || k.row == rowTCAsync) {
				errs += st.Errs
				calls += st.Calls
				failed += st.Failed
				cells++
			}
		}
		if cells == 0 {
			missing(t)
		} else {
			out = append(out, check{t, fmt.Sprintf("%d errors in %d calls, %d failed runs", errs, calls, failed), verdict(errs == 0 && failed == 0)})
		}
	}
	{
		// The measured phase starts after the warm-up, with every caller's call in flight: the
		// live heap then holds what the in-flight calls need. Growth past it (beyond a quarter,
		// plus 8 MiB) would be a leak or an unbounded queue.
		t := "c=4096: no memory growth beyond the in-flight calls (live heap, start → end of the measured phase)"
		var parts []string
		ok, seen := true, false
		for _, row := range []Row{rowTC, rowTCAsync} {
			for _, size := range []int{128, 4096} {
				st := s.Get(row, Cell{4096, size})
				if st == nil || math.IsNaN(st.HeapStartKB) || math.IsNaN(st.HeapEndKB) {
					continue
				}
				seen = true
				grew := st.HeapEndKB > 1.25*st.HeapStartKB+8<<10
				ok = ok && !grew
				parts = append(parts, fmt.Sprintf("%s %d B: %.1f → %.1f MiB (peak RSS %.0f MiB)",
					row.Client, size, st.HeapStartKB/1024, st.HeapEndKB/1024, st.MaxRSSKB/1024))
			}
		}
		if !seen {
			missing(t)
		} else {
			out = append(out, check{t, strings.Join(parts, "; "), verdict(ok)})
		}
	}
	return out
}

// The targets of issue 9, at every size and concurrency of the large-payload matrix.
const (
	largeVsStdlib   = 1.0 // tarscomm's QPS at least the stdlib client's
	largeVsGRPC     = 2.0 // and twice gRPC-go's
	largeBytesLimit = 2.5 // client bytes allocated per call, in payloads
)

// largeTargets evaluates issue 9's targets on the medians of the large-payload matrix m: in
// every cell, tarscomm's QPS against the stdlib client's (both on tarscomm's server) and
// gRPC-go's, and the bytes tarscomm's client allocates per call against the payload.
func largeTargets(s Stats, m Matrix) []check {
	if m.Empty() {
		return []check{{"large payloads", "not in this run", -1}}
	}
	var out []check
	missing := func(t string) { out = append(out, check{t, "not in this run", -1}) }
	for _, size := range m.Sizes {
		for _, c := range m.Cs {
			cell := Cell{c, size}
			where := fmt.Sprintf("%s, c=%d", fmtSize(size), c)
			tc := s.Get(rowTC, cell)
			out = append(out,
				qpsCheck(s, where+": QPS ≥ the stdlib client's", cell, rowStdlib, largeVsStdlib),
				qpsCheck(s, where+": QPS ≥ 2× gRPC-go's", cell, rowGRPC, largeVsGRPC))
			t := fmt.Sprintf("%s: client bytes allocated per call ≤ %.1f× the payload", where, largeBytesLimit)
			if tc == nil || math.IsNaN(tc.Bytes) {
				missing(t)
			} else {
				r := tc.Bytes / float64(size)
				out = append(out, check{t, fmt.Sprintf("%s: %.2f×", fmtBytes(tc.Bytes), r), verdict(r <= largeBytesLimit)})
			}
		}
	}
	return out
}

// The targets of issue 18: tarscomm (client and server) against the floor (the stdlib client
// and server) and gRPC-go.
const (
	floorLargeVsFloor = 1.0 // large payloads: tarscomm's QPS at least the floor's
	floorLargeVsGRPC  = 2.0 // and twice gRPC-go's
	floorBytesLimit   = 1.5 // client and server bytes allocated per call, in payloads
	floorSmallVsFloor = 2.5 // 128 B, c = 64 and 512: QPS against the floor's
	floorCPULimit     = 2.0 // 128 B, c = 512: client and server CPU per call, µs
)

// Issue 18's cells: the large payloads at c = 4 and 64; 128 B at c = 512, 64 and 1.
var (
	floorLargeSizes = []int{8 << 20, 1 << 20, 64 << 10}
	floorLargeCs    = []int{4, 64}
)

// floorTargets evaluates issue 18's targets on the medians of both matrices: each is measured
// where its cell was run, "not in this run" elsewhere.
func floorTargets(s Stats) []check {
	var out []check
	missing := func(t string) { out = append(out, check{t, "not in this run", -1}) }
	for _, size := range floorLargeSizes {
		for _, c := range floorLargeCs {
			cell := Cell{c, size}
			where := fmt.Sprintf("%s, c=%d", fmtSize(size), c)
			out = append(out,
				qpsCheck(s, where+": QPS ≥ the floor's", cell, rowFloor, floorLargeVsFloor),
				qpsCheck(s, where+": QPS ≥ 2× gRPC-go's", cell, rowGRPC, floorLargeVsGRPC))
			tc := s.Get(rowTC, cell)
			for _, side := range []struct {
				what  string
				bytes func(*Stat) float64
			}{{"client", func(st *Stat) float64 { return st.Bytes }}, {"server", func(st *Stat) float64 { return st.ServerBytes }}} {
				t := fmt.Sprintf("%s: %s bytes allocated per call ≤ %.1f× the payload", where, side.what, floorBytesLimit)
				if tc == nil || math.IsNaN(side.bytes(tc)) {
					missing(t)
					continue
				}
				r := side.bytes(tc) / float64(size)
				out = append(out, check{t, fmt.Sprintf("%s: %.2f×%s", fmtBytes(side.bytes(tc)), r, errNote(tc)), verdict(r <= floorBytesLimit)})
			}
		}
	}
	for _, c := range []int{512, 64} {
		out = append(out, qpsCheck(s, fmt.Sprintf("128 B, c=%d: QPS ≥ %.1f× the floor's", c, floorSmallVsFloor), Cell{c, 128}, rowFloor, floorSmallVsFloor))
	}
	tc := s.Get(rowTC, Cell{512, 128})
	for _, side := range []struct {
		what string
		cpu  func(*Stat) float64
	}{{"client", func(st *Stat) float64 { return st.ClientCPU }}, {"server", func(st *Stat) float64 { return st.ServerCPU }}} {
		t := fmt.Sprintf("128 B, c=512: %s CPU per call ≤ %.0f µs", side.what, floorCPULimit)
		if tc == nil || math.IsNaN(side.cpu(tc)) {
			missing(t)
			continue
		}
		v := side.cpu(tc)
		out = append(out, check{t, fmt.Sprintf("%.2f µs", v), verdict(v <= floorCPULimit)})
	}
	{
		cell := Cell{1, 128}
		tc, fl := s.Get(rowTC, cell), s.Get(rowFloor, cell)
		t := "128 B, c=1: p50 ≤ the floor's"
		if tc == nil || fl == nil {
			missing(t)
		} else {
			r := tc.P50 / fl.P50
			out = append(out, check{t, fmt.Sprintf("%s µs vs %s µs: %.2f×", fmtUS(tc.P50), fmtUS(fl.P50), r), verdict(tc.P50 <= fl.P50)})
		}
	}
	return out
}

// fmtServerAllocs formats the server's allocations per call of a run for its raw line.
func fmtServerAllocs(o Outcome) string {
	if !o.ServerMeasured {
		return " server_allocs_per_call=NA server_bytes_per_call=NA"
	}
	return fmt.Sprintf(" server_allocs_per_call=%.2f server_bytes_per_call=%.0f", o.ServerAllocs, o.ServerBytes)
}

// qpsCheck is target t: in cell, tarscomm's QPS (tarscomm → tarscomm) at least factor times
// vs's.
func qpsCheck(s Stats, t string, cell Cell, vs Row, factor float64) check {
	tc, other := s.Get(rowTC, cell), s.Get(vs, cell)
	if tc == nil || other == nil {
		return check{t, "not in this run", -1}
	}
	r := tc.QPS / other.QPS
	return check{t, fmt.Sprintf("%s vs %s: %s%s", fmtQPS(tc.QPS), fmtQPS(other.QPS), fmtRatio(r), errNote(tc, other)), verdict(r >= factor)}
}

// fmtRatio formats a ratio of two measurements, one of which may be 0 (no successful call).
func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "no ratio"
	}
	return fmt.Sprintf("%.2f×", r)
}

// errNote mentions the errors of each side of a comparison (QPS counts successful calls only).
func errNote(sts ...*Stat) string {
	var parts []string
	for _, st := range sts {
		if st.Errs > 0 || st.Failed > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d errors in %d calls, %d failed runs", st.Row.Client, st.Errs, st.Calls, st.Failed))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func ratio(st, ref *Stat, f func(*Stat) float64) string {
	if ref == nil {
		return "–"
	}
	a, b := f(st), f(ref)
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func fmtQPS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 1000:
		return fmt.Sprintf("%.1fk", v/1000)
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtUS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func fmtNum(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func fmtErrs(st *Stat) string {
	s := fmt.Sprintf("%d", st.Errs)
	if st.Errs > 0 {
		s = fmt.Sprintf("**%d** of %d", st.Errs, st.Calls)
	}
	if st.Failed > 0 {
		s += fmt.Sprintf(", **%d run(s) failed**", st.Failed)
	}
	return s
}

func fmtSize(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// fmtBytes formats a byte count with a binary unit.
func fmtBytes(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// fmtBytesPerCall formats the bytes allocated per call, with their ratio to the payload from
// 64 KiB on.
func fmtBytesPerCall(v float64, size int) string {
	if math.IsNaN(v) || size < 64<<10 {
		return fmtBytes(v)
	}
	return fmt.Sprintf("%s (%.2f×)", fmtBytes(v), v/float64(size))
}

func joinSizes(sizes []int) string { return join(sizes, fmtSize) }

func joinInts(ns []int) string { return join(ns, strconv.Itoa) }

func join(ns []int, f func(int) string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = f(n)
	}
	return strings.Join(parts, ", ")
}

func fmtLoad(l [3]float64) string { return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2]) }

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

func firstLine(s string) string { return firstLines(s, 1)[0] }

func firstLines(s string, n int) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[:min(n, len(lines))]
}
