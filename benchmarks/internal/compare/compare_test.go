package compare

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

func TestRunsInterleaveRoundRobin(t *testing.T) {
	p := Plan{Rows: DefaultRows[:3], Cs: []int{1, 64}, Sizes: []int{128}, Rounds: 3}
	runs := p.Runs()
	if len(runs) != 3*2*3 {
		t.Fatalf("%d runs, want 18", len(runs))
	}
	// Within each round and cell every row runs once, and the first row moves on each round.
	for round := 1; round <= 3; round++ {
		first := runs[(round-1)*6]
		if want := DefaultRows[(round-1)%3]; first.Row != want {
			t.Errorf("round %d starts with %v, want %v", round, first.Row, want)
		}
	}
	seen := map[Run]bool{}
	for _, r := range runs {
		if seen[r] {
			t.Fatalf("run %+v twice", r)
		}
		seen[r] = true
	}
}

func TestParseRows(t *testing.T) {
	rows, err := ParseRows("tarscomm@tarsgo, kitex-mux@kitex-mux")
	if err != nil || len(rows) != 2 || rows[0] != (Row{"tarscomm", "tarsgo"}) {
		t.Fatalf("ParseRows = %v, %v", rows, err)
	}
	for _, bad := range []string{"grpc@tarscomm", "tarscomm@grpc", "kitex@kitex-mux", "nope@tarscomm", "tarscomm"} {
		if _, err := ParseRows(bad); err == nil {
			t.Errorf("ParseRows(%q) succeeded", bad)
		}
	}
	if rows, _ := ParseRows("all"); len(rows) != len(DefaultRows) {
		t.Errorf("all = %d rows", len(rows))
	}
}

func TestAggregateTakesMediansAndSumsErrors(t *testing.T) {
	row, cell := Row{"grpc", "grpc"}, Cell{64, 128}
	out := func(qps float64, errs uint64) Outcome {
		return Outcome{Run: Run{Row: row, Cell: cell}, OK: true,
			Result: result.Result{QPS: qps, Calls: 1000, Errs: errs, ServerCPU: math.NaN()}}
	}
	st := Aggregate([]Outcome{out(300, 0), out(100, 2), out(200, 1), {Run: Run{Row: row, Cell: cell}}}).Get(row, cell)
	if st.QPS != 200 || st.Errs != 3 || st.Calls != 3000 || st.Runs != 3 || st.Failed != 1 || !math.IsNaN(st.ServerCPU) {
		t.Fatalf("Stat = %+v", st)
	}
	if m := median([]float64{1, 4, math.NaN(), 2, 3}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}

func TestKeptLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "RESULTS.md")
	if got, _ := keptLog(path); got != defaultLog {
		t.Errorf("no file: got %q", got)
	}
	log := "## Log\n\n- 2026-11-29 abc123: pooled calls, 1.8 → 1.1 allocs/call\n"
	if err := os.WriteFile(path, []byte("# old table\n\n## 128 B payload\n...\n\n"+log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := keptLog(path); got != log {
		t.Errorf("got %q, want %q", got, log)
	}
}

// TestMainWritesTheReport runs the whole driver on a small matrix: it builds the commands,
// starts every server as a process, runs every default pair once and writes the report.
func TestMainWritesTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every framework's processes")
	}
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "RESULTS.md")
	log := "## Log\n\nkept across runs\n"
	if err := os.WriteFile(out, []byte("stale\n"+log), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	err = Main(Options{
		Dir:      dir,
		Bin:      filepath.Join(tmp, "bin"),
		Plan:     Plan{Rows: DefaultRows, Cs: []int{2}, Sizes: []int{100}, Rounds: 1},
		Duration: 200 * time.Millisecond,
		Warmup:   100 * time.Millisecond,
		Timeout:  2 * time.Second,
		Out:      out,
		Command:  "test",
		Log:      &progress,
	})
	if err != nil {
		t.Fatalf("Main: %v\n%s", err, progress.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	if !strings.HasSuffix(report, log) || strings.Contains(report, "stale") {
		t.Errorf("the Log section was not kept, or the rest not rewritten:\n%s", report)
	}
	for _, row := range DefaultRows {
		line := "| 2 | " + row.Name() + " | "
		i := strings.Index(report, line)
		if i < 0 {
			t.Errorf("no table line for %s", row.Name())
			continue
		}
		end := strings.IndexByte(report[i:], '\n')
		if cells := strings.Split(report[i:i+end], "|"); strings.TrimSpace(cells[len(cells)-2]) != "0" {
			t.Errorf("%s: errors column %q, want 0\n%s", row.Name(), cells[len(cells)-2], progress.String())
		}
	}
	if strings.Count(report, "\nround=1 server=") != len(DefaultRows) {
		t.Errorf("want %d raw RESULT lines in:\n%s", len(DefaultRows), report)
	}
	// Charts are drawn at 128 B only; this run used 100 B, so none are expected. Draw them
	// from a fabricated 128 B result instead.
	rep := &Report{Options: Options{Charts: tmp, Plan: Plan{Rows: DefaultRows[:2], Cs: []int{1, 64}, Rounds: 1}}}
	for _, row := range DefaultRows[:2] {
		for _, c := range []int{1, 64} {
			rep.Outcomes = append(rep.Outcomes, Outcome{Run: Run{Row: row, Cell: Cell{c, 128}}, OK: true,
				Result: result.Result{QPS: float64(1000 * c), P99: float64(100 + c)}})
		}
	}
	if err := rep.WriteCharts(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{chartQPS, chartP99} {
		if fi, err := os.Stat(filepath.Join(tmp, name)); err != nil || fi.Size() < 1000 {
			t.Errorf("chart %s: %v", name, err)
		}
	}
}
