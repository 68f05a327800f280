package compare

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The charts, written beside the report.
const (
	chartQPS  = "qps_128.png"
	chartP99  = "p99_128.png"
	chartSize = 128
)

// palette has one distinct colour per default row.
var palette = []color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, // red: tarscomm
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x7f, 0x7f, 0x7f, 0xff}, // grey: stdlib client
	{0x00, 0x00, 0x00, 0xff}, // black: the floor (stdlib client and server)
	{0x1f, 0x77, 0xb4, 0xff}, // blue: TarsGo
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0x2c, 0xa0, 0x2c, 0xff}, // green: gRPC
	{0x94, 0x67, 0xbd, 0xff}, // purple: Kitex
	{0x8c, 0x56, 0x4b, 0xff}, // brown: Kitex mux
}

// WriteCharts draws QPS and p99 latency against concurrency, one line per row, at 128 B.
func (rep *Report) WriteCharts() error {
	stats := Aggregate(rep.Outcomes)
	o := rep.Options
	err := rep.chart(stats, filepath.Join(o.Charts, chartQPS), "QPS (successful calls per second)", false,
		func(s *Stat) float64 { return s.QPS })
	if err != nil {
		return err
	}
	return rep.chart(stats, filepath.Join(o.Charts, chartP99), "p99 latency (µs, log scale)", true,
		func(s *Stat) float64 { return s.P99 })
}

func (rep *Report) chart(stats Stats, path, ylabel string, logY bool, f func(*Stat) float64) error {
	o := rep.Options
	p := plot.New()
	what := strings.SplitN(ylabel, " ", 2)[0]
	p.Title.Text = fmt.Sprintf("Echo over loopback, %d B payload: %s against concurrency (%s)", chartSize, what, roundsText(o.Plan.Rounds))
	p.X.Label.Text = "concurrent callers c (log scale)"
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, c := range o.Plan.Cs {
		ticks = append(ticks, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true // low c is at the bottom left on both charts: the top left is free
	drawn := 0
	for i, row := range o.Plan.Rows {
		var pts plotter.XYs
		for _, c := range o.Plan.Cs {
			st := stats.Get(row, Cell{c, chartSize})
			if st == nil {
				continue
			}
			v := f(st)
			if math.IsNaN(v) || logY && v <= 0 {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(c), Y: v})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		col := palette[i%len(palette)]
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		if row.Client == "tarscomm" || row.Client == "tarscomm-async" {
			line.Width = vg.Points(3)
		}
		if row.Server != row.Client && row.Client != "tarscomm-async" && row.Client != "stdlib" {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)} // a client on another framework's server
		}
		points.Shape = shapes[i%len(shapes)]
		points.Radius = vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(row.Name(), line, points)
		drawn++
	}
	if drawn == 0 {
		return nil // nothing at this size in this run
	}
	return p.Save(9*vg.Inch, 5.5*vg.Inch, path)
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{},
	draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.CircleGlyph{}, draw.SquareGlyph{},
}

func roundsText(n int) string {
	if n == 1 {
		return "one round"
	}
	return fmt.Sprintf("medians of %d rounds", n)
}
