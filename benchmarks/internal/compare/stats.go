package compare

import (
	"math"
	"slices"
)

// Stat is the summary of one row in one cell over the rounds: medians of the runs that
// produced a result, and sums of their calls and errors.
type Stat struct {
	Row    Row
	Cell   Cell
	Runs   int // runs that produced a result
	Failed int // runs that produced none (crash, hang): shown, never dropped silently

	QPS, P50, P90, P99, P999, Max       float64
	Allocs, Bytes, ClientCPU, ServerCPU float64

	// The server process's heap allocations per call (objects, bytes); NaN where not measured.
	ServerAllocs, ServerBytes float64

	// Client memory (medians, KiB): heap in use at the start and end of the measured phase, peak RSS.
	HeapStartKB, HeapEndKB, MaxRSSKB float64

	Calls, Errs uint64
}

type statKey struct {
	row  Row
	cell Cell
}

// Stats holds the summaries by row and cell.
type Stats map[statKey]*Stat

// Get returns the summary of row in cell, or nil.
func (s Stats) Get(row Row, cell Cell) *Stat { return s[statKey{row, cell}] }

// Aggregate summarizes outcomes by row and cell.
func Aggregate(outs []Outcome) Stats {
	type acc struct {
		st   *Stat
		vals [16][]float64
	}
	accs := make(map[statKey]*acc)
	var order []statKey
	for _, o := range outs {
		k := statKey{o.Run.Row, o.Run.Cell}
		a := accs[k]
		if a == nil {
			a = &acc{st: &Stat{Row: k.row, Cell: k.cell}}
			accs[k] = a
			order = append(order, k)
		}
		if !o.OK {
			a.st.Failed++
			continue
		}
		r := o.Result
		a.st.Runs++
		a.st.Calls += r.Calls
		a.st.Errs += r.Errs
		srvAllocs, srvBytes := math.NaN(), math.NaN()
		if o.ServerMeasured {
			srvAllocs, srvBytes = o.ServerAllocs, o.ServerBytes
		}
		for i, v := range []float64{r.QPS, r.P50, r.P90, r.P99, r.P999, r.Max, r.AllocsPerCall, r.BytesPerCall, r.ClientCPU, r.ServerCPU,
			memKB(r.HeapStartKB), memKB(r.HeapEndKB), memKB(r.MaxRSSKB), srvAllocs, srvBytes} {
			a.vals[i] = append(a.vals[i], v)
		}
	}
	out := make(Stats, len(accs))
	for _, k := range order {
		a := accs[k]
		st := a.st
		for i, p := range []*float64{&st.QPS, &st.P50, &st.P90, &st.P99, &st.P999, &st.Max, &st.Allocs, &st.Bytes, &st.ClientCPU, &st.ServerCPU,
			&st.HeapStartKB, &st.HeapEndKB, &st.MaxRSSKB, &st.ServerAllocs, &st.ServerBytes} {
			*p = median(a.vals[i])
		}
		out[k] = st
	}
	return out
}

// memKB turns a memory figure into a sample; 0 (a loadgen that printed no MEM line) is NaN.
func memKB(v uint64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return float64(v)
}

// median returns the median of the values that are numbers; NaN if there are none.
func median(vs []float64) float64 {
	v := slices.DeleteFunc(slices.Clone(vs), func(x float64) bool { return math.IsNaN(x) })
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
