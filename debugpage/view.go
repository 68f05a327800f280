package debugpage

import (
	"fmt"
	"time"

	"github.com/tarscomm/tarscomm/stats"
)

// View is what the page shows and the JSON holds: a Snapshot with durations in milliseconds and
// results by name. Every JSON key is snake_case; the configuration, when it is a struct, is a
// list of {"key", "value"} with the keys as its file names them.
type View struct {
	Title     string            `json:"title"`
	Taken     time.Time         `json:"taken"`
	Totals    Totals            `json:"totals"`
	Threads   []stats.NetThread `json:"threads"`
	Endpoints []stats.Endpoint  `json:"endpoints"`
	Calls     []Call            `json:"calls"`
	// Config is the configuration: its Settings when it is a struct or a map with string keys,
	// else as given.
	Config any `json:"config,omitempty"`
	// Settings is Config line by line (nil when it is neither).
	Settings []Setting `json:"-"`
	// Balancers are the registered balancers: name and description.
	Balancers []Setting `json:"balancers,omitempty"`
}

// Totals add up every call. Endpoints counts each (servant, endpoint) once, whatever the number
// of net threads; Inactive those of them that some thread keeps out of rotation.
type Totals struct {
	Calls     uint64 `json:"calls"`
	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	Endpoints int    `json:"endpoints"`
	Inactive  int    `json:"inactive"`
}

// Call is one (servant, function, endpoint) row.
type Call struct {
	Servant   string            `json:"servant"`
	Function  string            `json:"function"`
	Endpoint  string            `json:"endpoint"`
	Calls     uint64            `json:"calls"`
	Results   map[string]uint64 `json:"results"` // non-zero results by name
	Codes     []stats.CodeCount `json:"codes,omitempty"`
	MeanMs    float64           `json:"mean_ms"`
	P50Ms     float64           `json:"p50_ms"`
	P99Ms     float64           `json:"p99_ms"`
	MaxMs     float64           `json:"max_ms"`
	Buckets   []Bucket          `json:"buckets"`
	ErrorRate float64           `json:"error_rate"`
	Bars      []Bar             `json:"-"`
}

// Bar is a bucket drawn in the chart: its box in the SVG's coordinates.
type Bar struct {
	X, Y, W, H int
	Mid        int // the bar's centre, where its labels are drawn
	Le         string
	Count      uint64
}

// Chart geometry.
const (
	barW   = 44
	barGap = 4
	chartH = 110 // the tallest bar; the count above it and the bound below take more
	// chartTop is the room above the bars for their counts.
	chartTop = 14
)

// Bucket is one bar of a latency histogram.
type Bucket struct {
	Le    string `json:"le"` // upper bound, "+Inf" for the last
	Count uint64 `json:"count"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func newView(s stats.Snapshot, o Options) View {
	v := View{Title: o.Title, Taken: s.Taken, Threads: s.Threads, Endpoints: s.Endpoints, Config: o.Config, Settings: settings(o.Config), Balancers: o.Balancers}
	if v.Settings != nil {
		v.Config = v.Settings
	}
	if v.Title == "" {
		v.Title = "tarscomm"
	}
	// The JSON's lists are lists even when empty ([], not null), as its readers expect.
	if v.Threads == nil {
		v.Threads = []stats.NetThread{}
	}
	if v.Endpoints == nil {
		v.Endpoints = []stats.Endpoint{}
	}
	v.Calls = make([]Call, 0, len(s.Calls))
	// An endpoint has a row per net thread (each has its own connection and health rules); the
	// totals count it once, inactive when some thread keeps it out of rotation.
	type key struct{ servant, endpoint string }
	inactive := make(map[key]bool, len(s.Endpoints))
	for _, e := range s.Endpoints {
		k := key{e.Servant, e.Endpoint}
		out, seen := inactive[k]
		inactive[k] = out || !e.Active
		if !seen {
			v.Totals.Endpoints++
		}
	}
	for _, out := range inactive {
		if out {
			v.Totals.Inactive++
		}
	}
	bounds := stats.Bounds()
	for i := range s.Calls {
		c := &s.Calls[i]
		row := Call{Servant: c.Servant, Function: c.Function, Endpoint: c.Endpoint, Calls: c.Calls(),
			Results: map[string]uint64{}, Codes: c.Codes,
			MeanMs: ms(c.Latency.Mean()), P50Ms: ms(c.Latency.Quantile(0.5)), P99Ms: ms(c.Latency.Quantile(0.99)), MaxMs: ms(c.Latency.Max)}
		for r, n := range c.Results {
			if n != 0 {
				row.Results[stats.Result(r).String()] = n
			}
		}
		if row.Calls != 0 {
			row.ErrorRate = float64(c.Failures()) / float64(row.Calls)
		}
		for b, n := range c.Latency.Counts {
			le := "+Inf"
			if b < len(bounds) {
				le = fmtDur(bounds[b])
			}
			row.Buckets = append(row.Buckets, Bucket{Le: le, Count: n})
		}
		var top uint64
		for _, b := range row.Buckets {
			top = max(top, b.Count)
		}
		for b, bk := range row.Buckets {
			h := 0
			if top > 0 {
				h = int(bk.Count * chartH / top)
				if bk.Count > 0 && h == 0 {
					h = 1
				}
			}
			row.Bars = append(row.Bars, Bar{X: b * (barW + barGap), Y: chartTop + chartH - h, W: barW, H: h,
				Mid: b*(barW+barGap) + barW/2, Le: bk.Le, Count: bk.Count})
		}
		v.Calls = append(v.Calls, row)
		v.Totals.Calls += row.Calls
		v.Totals.Successes += c.Results[stats.OK]
		v.Totals.Failures += c.Failures()
	}
	return v
}

func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	}
	if d < time.Second {
		return fmt.Sprintf("%gms", ms(d))
	}
	return fmt.Sprintf("%gs", d.Seconds())
}
