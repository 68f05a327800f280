// Package compare is the driver behind `make bench-compare`: it starts each framework's echo
// server as its own process, runs the load generator (also its own process) over two matrices
// of concurrency × payload size (small payloads for every client/server pair, then large ones
// for the frameworks' own pairs and the baseline), interleaving the pairs over several rounds,
// and writes the medians, ratios to tarscomm, the issues' targets (PASS/FAIL), charts and
// every raw result to RESULTS.md.
package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Row is one line of the comparison: a client calling a server.
type Row struct {
	Client string // peer client name: tarscomm, tarscomm-async, stdlib, tarsgo, grpc, kitex, kitex-mux
	Server string // peer server name: tarscomm, tarsgo, stdlib, grpc, kitex, kitex-mux
}

// Name is how tables and charts show the row.
func (r Row) Name() string { return r.Client + " → " + r.Server }

// DefaultRows are the pairs the issues ask for: every framework against its own server, the
// minimal stdlib client (the baseline) against tarscomm's server, the floor (the stdlib client
// against the stdlib server: TARS with no framework at either end), and the TARS clients
// across the two TARS frameworks' servers.
var DefaultRows = []Row{
	{"tarscomm", "tarscomm"},
	{"tarscomm-async", "tarscomm"},
	{"stdlib", "tarscomm"},
	{"stdlib", "stdlib"},
	{"tarsgo", "tarsgo"},
	{"tarscomm", "tarsgo"},
	{"tarsgo", "tarscomm"},
	{"grpc", "grpc"},
	{"kitex", "kitex"},
	{"kitex-mux", "kitex-mux"},
}

// DefaultLargeRows are the pairs of the large-payload matrix: every framework against its own
// server (the floor: stdlib against stdlib) and the stdlib client against tarscomm's server (the
// targets compare tarscomm with the baselines and gRPC-go; the asynchronous and
// cross-framework TARS pairs are left out to keep the run short).
var DefaultLargeRows = []Row{
	{"tarscomm", "tarscomm"},
	{"stdlib", "tarscomm"},
	{"stdlib", "stdlib"},
	{"grpc", "grpc"},
	{"tarsgo", "tarsgo"},
	{"kitex", "kitex"},
	{"kitex-mux", "kitex-mux"},
}

// DefaultLargeSizes and DefaultLargeCs are the cells of the large-payload matrix.
var (
	DefaultLargeSizes = []int{64 << 10, 1 << 20, 8 << 20}
	DefaultLargeCs    = []int{4, 64}
)

// ParseRows reads "client@server,client@server"; "all" (or "") is DefaultRows.
func ParseRows(s string) ([]Row, error) {
	if s == "" || s == "all" {
		return slices.Clone(DefaultRows), nil
	}
	var rows []Row
	for _, f := range strings.Split(s, ",") {
		c, sv, ok := strings.Cut(strings.TrimSpace(f), "@")
		if !ok {
			return nil, fmt.Errorf("compare: row %q is not client@server", f)
		}
		r := Row{c, sv}
		if err := r.valid(); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (r Row) valid() error {
	if len(clientFlags(r.Client)) == 0 {
		return fmt.Errorf("compare: unknown client %q", r.Client)
	}
	if len(serverFlags(r.Server)) == 0 {
		return fmt.Errorf("compare: unknown server %q", r.Server)
	}
	tarsClient := slices.Contains([]string{"tarscomm", "tarscomm-async", "stdlib", "tarsgo"}, r.Client)
	tarsServer := slices.Contains([]string{"tarscomm", "tarsgo", "stdlib"}, r.Server)
	if tarsClient != tarsServer || !tarsClient && r.Client != r.Server {
		return fmt.Errorf("compare: client %s cannot call server %s", r.Client, r.Server)
	}
	return nil
}

// clientFlags returns the load generator's flags selecting a client.
func clientFlags(client string) []string {
	switch client {
	case "tarscomm", "stdlib", "tarsgo", "grpc", "kitex":
		return []string{"-fw", client}
	case "tarscomm-async":
		return []string{"-fw", "tarscomm", "-async"}
	case "kitex-mux":
		return []string{"-fw", "kitex", "-mux"}
	}
	return nil
}

// serverFlags returns the echo server's flags selecting a server.
func serverFlags(server string) []string {
	switch server {
	case "tarscomm", "tarsgo", "grpc", "kitex", "stdlib":
		return []string{"-fw", server}
	case "kitex-mux":
		return []string{"-fw", "kitex", "-mux"}
	}
	return nil
}

// Cell is one point of the matrix.
type Cell struct {
	C    int // concurrent callers
	Size int // payload bytes
}

// Timing is how long each run of a matrix lasts.
type Timing struct {
	Duration time.Duration // measured phase
	Warmup   time.Duration // before it
	Timeout  time.Duration // of each call
}

// A run's warm-up and measured phase grow with what one call moves, so that the measured phase
// holds many calls rather than the first few, and the warm-up covers the buffer pools' growth:
// in proportion to the volume in flight (callers × payload) above stretchBytes, and to the
// payload itself above stretchSize, whichever is more, up to maxStretch times. With c = 64 and
// 8 MiB a call takes seconds; with c = 4 and 8 MiB a 1 s phase held 20–70 calls, half of them
// while the pools were still growing.
const (
	stretchBytes = 128 << 20
	stretchSize  = 2 << 20
	maxStretch   = 4
)

// For returns the timing of a run in cell: t, its warm-up and measured phase stretched by
// the larger of c × size / stretchBytes and size / stretchSize (at least 1, at most maxStretch).
func (t Timing) For(cell Cell) Timing {
	f := max(float64(cell.C)*float64(cell.Size)/stretchBytes, float64(cell.Size)/stretchSize)
	f = min(max(f, 1), maxStretch)
	t.Warmup = time.Duration(float64(t.Warmup) * f)
	t.Duration = time.Duration(float64(t.Duration) * f)
	return t
}

// Run is one load-generator run.
type Run struct {
	Round  int
	Row    Row
	Cell   Cell
	Timing Timing
}

// Matrix is a block of runs: every row in every cell (concurrency × size), for Rounds
// rounds, each run with Timing (stretched for the largest cells: Timing.For). A matrix without rows, concurrencies or sizes is
// empty: it has no runs.
type Matrix struct {
	Rows   []Row
	Cs     []int
	Sizes  []int
	Rounds int
	Timing
}

// Empty reports whether m has no runs.
func (m Matrix) Empty() bool {
	return len(m.Rows) == 0 || len(m.Cs) == 0 || len(m.Sizes) == 0 || m.Rounds < 1
}

// Runs lists the runs in the order they run: round by round; within a round, cell by cell;
// within a cell, every row once, starting one row further each round (round-robin), so
// that no pair always runs first or right after the same neighbour.
func (m Matrix) Runs() []Run {
	if m.Empty() {
		return nil
	}
	var runs []Run
	for round := range m.Rounds {
		for _, size := range m.Sizes {
			for _, c := range m.Cs {
				for i := range m.Rows {
					row := m.Rows[(i+round)%len(m.Rows)]
					cell := Cell{C: c, Size: size}
					runs = append(runs, Run{Round: round + 1, Row: row, Cell: cell, Timing: m.Timing.For(cell)})
				}
			}
		}
	}
	return runs
}

// Plan is the whole comparison: the main matrix (small payloads, every pair; its fields are
// promoted) and the large-payload matrix, which runs after it, with its own pairs, rounds and
// timing. Either may be empty.
type Plan struct {
	Matrix
	Large Matrix
}

// Matrices returns the matrices that have runs, main first.
func (p Plan) Matrices() []Matrix {
	var ms []Matrix
	for _, m := range []Matrix{p.Matrix, p.Large} {
		if !m.Empty() {
			ms = append(ms, m)
		}
	}
	return ms
}

// Runs lists every run: the main matrix's, then the large matrix's.
func (p Plan) Runs() []Run {
	return append(p.Matrix.Runs(), p.Large.Runs()...)
}

// Validate checks that the plan has runs, that each matrix's timing is usable, and that no
// size is in both matrices (their medians would mix).
func (p Plan) Validate() error {
	ms := p.Matrices()
	if len(ms) == 0 {
		return errors.New("compare: nothing to run (no rows, concurrencies or sizes)")
	}
	for _, m := range ms {
		if m.Duration <= 0 || m.Warmup < 0 || m.Timeout <= 0 {
			return fmt.Errorf("compare: need a measured phase and a call timeout > 0 (have %v, %v)", m.Duration, m.Timeout)
		}
	}
	if !p.Matrix.Empty() && !p.Large.Empty() {
		for _, s := range p.Large.Sizes {
			if slices.Contains(p.Sizes, s) {
				return fmt.Errorf("compare: size %d is in both the main and the large matrix", s)
			}
		}
	}
	return nil
}

// Servers returns the servers the rows need, in first-use order.
func (p Plan) Servers() []string {
	var s []string
	for _, m := range p.Matrices() {
		for _, r := range m.Rows {
			if !slices.Contains(s, r.Server) {
				s = append(s, r.Server)
			}
		}
	}
	return s
}
