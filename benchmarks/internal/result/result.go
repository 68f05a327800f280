// Package result is the one-line summary a load generator prints for a run, and its parser:
//
//	RESULT fw=tarscomm c=64 size=128 calls=612345 errs=0 secs=3.000 qps=204115 p50_us=301.1
//	p90_us=402.2 p99_us=650.0 p999_us=1200.5 max_us=5400.0 allocs_per_call=4.01
//	bytes_per_call=402 client_cpu_us_per_call=4.10 server_cpu_us_per_call=3.20
//
// (one line). A value that could not be measured (no -srvpid, no calls) is written NA.
package result

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Prefix starts every result line.
const Prefix = "RESULT "

// Result is the summary of one load-generator run over its measured phase.
type Result struct {
	FW    string  // client framework (and mode): tarscomm, tarscomm-async, kitex-mux, ...
	C     int     // concurrent callers (in-flight window for async clients)
	Size  int     // payload bytes
	Calls uint64  // calls that completed in the measured phase, successful or not
	Errs  uint64  // calls among them that failed or whose echo did not match
	Secs  float64 // length of the measured phase

	QPS float64 // successful calls per second

	// Latency percentiles and maximum of the successful calls, in microseconds.
	P50, P90, P99, P999, Max float64

	AllocsPerCall float64 // heap allocations of the client process per call (runtime.MemStats)
	BytesPerCall  float64 // heap bytes allocated by the client process per call
	ClientCPU     float64 // client process CPU (user+system) per call, µs
	ServerCPU     float64 // server process CPU per call, µs (from /proc/PID/stat); NaN if unknown

	// Memory of the client process, reported on a separate MEM line (see Mem) so that the
	// RESULT line keeps the format: live heap (HeapAlloc right after a GC) at the start
	// and at the end of the measured phase, and the peak resident set size.
	HeapStartKB, HeapEndKB, MaxRSSKB uint64
}

// MemPrefix starts the memory line printed after a result line.
const MemPrefix = "MEM "

// Mem formats r's memory figures as a MEM line: "MEM fw=.. c=.. size=.. heap_start_kb=..
// heap_end_kb=.. max_rss_kb=..".
func (r Result) Mem() string {
	return fmt.Sprintf("MEM fw=%s c=%d size=%d heap_start_kb=%d heap_end_kb=%d max_rss_kb=%d",
		r.FW, r.C, r.Size, r.HeapStartKB, r.HeapEndKB, r.MaxRSSKB)
}

// ParseMem reads a MEM line into r's memory fields.
func (r *Result) ParseMem(line string) error {
	i := strings.Index(line, MemPrefix)
	if i < 0 {
		return fmt.Errorf("result: no %q in %q", MemPrefix, line)
	}
	for _, tok := range strings.Fields(line[i+len(MemPrefix):]) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			return fmt.Errorf("result: %q is not key=value", tok)
		}
		var dst *uint64
		switch k {
		case "heap_start_kb":
			dst = &r.HeapStartKB
		case "heap_end_kb":
			dst = &r.HeapEndKB
		case "max_rss_kb":
			dst = &r.MaxRSSKB
		default:
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("result: %s=%s: %w", k, v, err)
		}
		*dst = n
	}
	return nil
}

// fields lists the keys of a result line in order, with how to print and where to parse each.
func (r *Result) fields() []field {
	return []field{
		{"fw", strField(&r.FW)},
		{"c", intField(&r.C)},
		{"size", intField(&r.Size)},
		{"calls", uintField(&r.Calls)},
		{"errs", uintField(&r.Errs)},
		{"secs", floatField(&r.Secs, 3)},
		{"qps", floatField(&r.QPS, 0)},
		{"p50_us", floatField(&r.P50, 1)},
		{"p90_us", floatField(&r.P90, 1)},
		{"p99_us", floatField(&r.P99, 1)},
		{"p999_us", floatField(&r.P999, 1)},
		{"max_us", floatField(&r.Max, 1)},
		{"allocs_per_call", floatField(&r.AllocsPerCall, 2)},
		{"bytes_per_call", floatField(&r.BytesPerCall, 0)},
		{"client_cpu_us_per_call", floatField(&r.ClientCPU, 2)},
		{"server_cpu_us_per_call", floatField(&r.ServerCPU, 2)},
	}
}

// String formats r as a result line, without a trailing newline.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(Prefix))
	for _, f := range r.fields() {
		b.WriteByte(' ')
		b.WriteString(f.key)
		b.WriteByte('=')
		b.WriteString(f.val.format())
	}
	return b.String()
}

// Parse reads a result line (as printed by String; leading text before "RESULT " is
// ignored). Every key must be present exactly once.
func Parse(line string) (Result, error) {
	i := strings.Index(line, Prefix)
	if i < 0 {
		return Result{}, fmt.Errorf("result: no %q in %q", Prefix, line)
	}
	kv := make(map[string]string)
	for _, tok := range strings.Fields(line[i+len(Prefix):]) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			return Result{}, fmt.Errorf("result: %q is not key=value", tok)
		}
		if _, dup := kv[k]; dup {
			return Result{}, fmt.Errorf("result: key %q twice", k)
		}
		kv[k] = v
	}
	var r Result
	for _, f := range r.fields() {
		v, ok := kv[f.key]
		if !ok {
			return Result{}, fmt.Errorf("result: missing %s in %q", f.key, line)
		}
		if err := f.val.parse(v); err != nil {
			return Result{}, fmt.Errorf("result: %s=%s: %w", f.key, v, err)
		}
		delete(kv, f.key)
	}
	for k := range kv {
		return Result{}, fmt.Errorf("result: unknown key %q", k)
	}
	return r, nil
}

type field struct {
	key string
	val value
}

type value interface {
	format() string
	parse(string) error
}

type fl struct {
	p    *float64
	prec int
}

func floatField(p *float64, prec int) value { return fl{p, prec} }

func (f fl) format() string {
	if math.IsNaN(*f.p) || math.IsInf(*f.p, 0) {
		return "NA"
	}
	return strconv.FormatFloat(*f.p, 'f', f.prec, 64)
}

func (f fl) parse(s string) error {
	if s == "NA" {
		*f.p = math.NaN()
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	*f.p = v
	return err
}

type sv struct{ p *string }
type iv struct{ p *int }
type uv struct{ p *uint64 }

func strField(p *string) value  { return sv{p} }
func intField(p *int) value     { return iv{p} }
func uintField(p *uint64) value { return uv{p} }

func (v sv) format() string { return *v.p }
func (v sv) parse(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	*v.p = s
	return nil
}
func (v iv) format() string { return strconv.Itoa(*v.p) }
func (v iv) parse(s string) (err error) {
	*v.p, err = strconv.Atoi(s)
	return err
}
func (v uv) format() string { return strconv.FormatUint(*v.p, 10) }
func (v uv) parse(s string) (err error) {
	*v.p, err = strconv.ParseUint(s, 10, 64)
	return err
}

// PhasePrefix starts the line a load generator run with -sync prints right before each edge
// of its measured phase: "PHASE start", "PHASE end".
const PhasePrefix = "PHASE "

// AllocPrefix starts the line an echo server prints when asked for its allocations (a line
// "stats" on its standard input): "ALLOC mallocs=N bytes=N", runtime.MemStats' Mallocs and
// TotalAlloc of the server process so far.
const AllocPrefix = "ALLOC "

// Alloc is a process's heap allocations so far: objects and bytes (runtime.MemStats' Mallocs
// and TotalAlloc).
type Alloc struct {
	Mallocs, Bytes uint64
}

// String formats a as an ALLOC line, without a trailing newline.
func (a Alloc) String() string {
	return fmt.Sprintf("%smallocs=%d bytes=%d", AllocPrefix, a.Mallocs, a.Bytes)
}

// ParseAlloc reads an ALLOC line (text before "ALLOC " is ignored); both keys are needed.
func ParseAlloc(line string) (Alloc, error) {
	i := strings.Index(line, AllocPrefix)
	if i < 0 {
		return Alloc{}, fmt.Errorf("result: no %q in %q", AllocPrefix, line)
	}
	var a Alloc
	seen := 0
	for _, tok := range strings.Fields(line[i+len(AllocPrefix):]) {
		k, v, ok := strings.Cut(tok, "=")
		var dst *uint64
		switch {
		case !ok:
			return Alloc{}, fmt.Errorf("result: %q is not key=value", tok)
		case k == "mallocs":
			dst = &a.Mallocs
		case k == "bytes":
			dst = &a.Bytes
		default:
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Alloc{}, fmt.Errorf("result: %s=%s: %w", k, v, err)
		}
		*dst = n
		seen++
	}
	if seen != 2 {
		return Alloc{}, fmt.Errorf("result: want mallocs and bytes in %q", line)
	}
	return a, nil
}
