// Package compare is the driver behind `make bench-compare`: it starts each framework's echo
// server as its own process, runs the load generator (also its own process) over a matrix
// of concurrency × payload size for every client/server pair, interleaving the pairs over
// several rounds, and writes the medians, ratios to tarscomm, targets, charts and every raw
// result to RESULTS.md.
package compare

import (
	"fmt"
	"slices"
	"strings"
)

// Row is one line of the comparison: a client calling a server.
type Row struct {
	Client string // peer client name: tarscomm, tarscomm-async, stdlib, tarsgo, grpc, kitex, kitex-mux
	Server string // peer server name: tarscomm, tarsgo, grpc, kitex, kitex-mux
}

// Name is how tables and charts show the row.
func (r Row) Name() string { return r.Client + " → " + r.Server }

// DefaultRows are the pairs the issue asks for: every framework against its own server, the
// minimal stdlib client (the baseline) against tarscomm's server, and the TARS clients across
// the two TARS servers.
var DefaultRows = []Row{
	{"tarscomm", "tarscomm"},
	{"tarscomm-async", "tarscomm"},
	{"stdlib", "tarscomm"},
	{"tarsgo", "tarsgo"},
	{"tarscomm", "tarsgo"},
	{"tarsgo", "tarscomm"},
	{"grpc", "grpc"},
	{"kitex", "kitex"},
	{"kitex-mux", "kitex-mux"},
}

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
	tarsServer := r.Server == "tarscomm" || r.Server == "tarsgo"
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
	case "tarscomm", "tarsgo", "grpc", "kitex":
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

// Run is one load-generator run.
type Run struct {
	Round int
	Row   Row
	Cell  Cell
}

// Plan is the whole matrix.
type Plan struct {
	Rows   []Row
	Cs     []int
	Sizes  []int
	Rounds int
}

// Runs lists the runs in the order they run: round by round; within a round, cell by cell;
// within a cell, every row once, starting one row further each round (round-robin), so
// that no pair always runs first or right after the same neighbour.
func (p Plan) Runs() []Run {
	var runs []Run
	for round := range p.Rounds {
		for _, size := range p.Sizes {
			for _, c := range p.Cs {
				for i := range p.Rows {
					row := p.Rows[(i+round)%len(p.Rows)]
					runs = append(runs, Run{Round: round + 1, Row: row, Cell: Cell{C: c, Size: size}})
				}
			}
		}
	}
	return runs
}

// Servers returns the servers the rows need, in first-use order.
func (p Plan) Servers() []string {
	var s []string
	for _, r := range p.Rows {
		if !slices.Contains(s, r.Server) {
			s = append(s, r.Server)
		}
	}
	return s
}
