package result

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestStringMatchesTheIssueFormat(t *testing.T) {
	r := Result{FW: "tarscomm", C: 64, Size: 128, Calls: 1000, Errs: 2, Secs: 2.5, QPS: 399.2,
		P50: 100, P90: 200, P99: 300, P999: 400, Max: 500, AllocsPerCall: 4, BytesPerCall: 400,
		ClientCPU: 3.5, ServerCPU: math.NaN()}
	line := r.String()
	want := regexp.MustCompile(`^RESULT fw=\S+ c=\d+ size=\d+ calls=\d+ errs=\d+ secs=[\d.]+ qps=[\d.]+ ` +
		`p50_us=[\d.]+ p90_us=[\d.]+ p99_us=[\d.]+ p999_us=[\d.]+ max_us=[\d.]+ allocs_per_call=[\d.]+ ` +
		`bytes_per_call=[\d.]+ client_cpu_us_per_call=[\d.]+ server_cpu_us_per_call=(NA|[\d.]+)$`)
	if !want.MatchString(line) {
		t.Fatalf("line %q does not match %v", line, want)
	}
	if !strings.Contains(line, " errs=2 ") || !strings.HasSuffix(line, "server_cpu_us_per_call=NA") {
		t.Fatalf("line %q: want errs=2 and an NA server CPU", line)
	}
}

func TestParseRoundTrip(t *testing.T) {
	in := Result{FW: "kitex-mux", C: 4096, Size: 4096, Calls: 123456, Errs: 0, Secs: 3, QPS: 41152,
		P50: 12.5, P90: 20.1, P99: 30.7, P999: 99.9, Max: 1234.5, AllocsPerCall: 9.25, BytesPerCall: 1024,
		ClientCPU: 10.25, ServerCPU: 8.5}
	got, err := Parse("noise before " + in.String())
	if err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Fatalf("Parse(String()) = %+v, want %+v", got, in)
	}
}

func TestParseRejects(t *testing.T) {
	good := Result{FW: "grpc", C: 1, Size: 128}.String()
	for _, tc := range []struct {
		name, line string
	}{
		{"no prefix", "fw=grpc c=1"},
		{"missing key", strings.Replace(good, " qps=0", "", 1)},
		{"unknown key", good + " extra=1"},
		{"duplicate key", good + " c=2"},
		{"bad number", strings.Replace(good, "c=1 ", "c=x ", 1)},
	} {
		if _, err := Parse(tc.line); err == nil {
			t.Errorf("%s: Parse(%q) succeeded, want an error", tc.name, tc.line)
		}
	}
}

func TestMemLineRoundTrip(t *testing.T) {
	r := Result{FW: "tarscomm", C: 4096, Size: 128, HeapStartKB: 10240, HeapEndKB: 11000, MaxRSSKB: 65536}
	line := r.Mem()
	var got Result
	if err := got.ParseMem("noise " + line); err != nil {
		t.Fatal(err)
	}
	if got.HeapStartKB != r.HeapStartKB || got.HeapEndKB != r.HeapEndKB || got.MaxRSSKB != r.MaxRSSKB {
		t.Fatalf("ParseMem(%q) = %+v, want the figures of %+v", line, got, r)
	}
	if err := got.ParseMem("MEM heap_end_kb=x"); err == nil {
		t.Fatal("ParseMem accepted a bad number")
	}
}

func TestAllocRoundTrip(t *testing.T) {
	in := Alloc{Mallocs: 123456789, Bytes: 1 << 40}
	got, err := ParseAlloc("echoserver said: " + in.String())
	if err != nil || got != in {
		t.Fatalf("ParseAlloc(%q) = %+v, %v", in.String(), got, err)
	}
	for _, bad := range []string{"mallocs=1 bytes=2", "ALLOC mallocs=1", "ALLOC mallocs=x bytes=2", "ALLOC mallocs bytes=2"} {
		if _, err := ParseAlloc(bad); err == nil {
			t.Errorf("ParseAlloc(%q) succeeded", bad)
		}
	}
}
