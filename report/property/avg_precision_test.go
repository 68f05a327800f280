package property_test

import (
	"strconv"
	"testing"

	"github.com/tarscomm/tarscomm/report/property"
)

// TestAvgSentExactly: an Avg is sum/count "as a decimal", as TarsCpp's avg::get
// (TC_Common::tostr(double): fixed notation, trailing zeros dropped) and TarsGo's Avg.Get
// (strconv.FormatFloat(v, 'f', -1, 64)) send it. An interval whose values average 1234567 (a
// latency in microseconds, a size in bytes) must reach the property service as 1234567, not
// rounded to six significant digits in exponent form. Before, it was sent as "1.23457e+06", read
// back as 1234570 (found by a review).
func TestAvgSentExactly(t *testing.T) {
	impl, prx := start(t)
	reg := property.NewRegistry()
	p := reg.New("bytes", property.Avg())
	p.Report(1234566)
	p.Report(1234568)
	r := property.NewReporter(reg, prx, property.Options{ModuleName: "Test.Server"})
	if err := r.Close(); err != nil { // Close without Start sends the interval's values once
		t.Fatal(err)
	}
	got := ""
	for _, m := range impl.take() {
		for h, b := range m {
			if h.PropertyName == "bytes" && len(b.VInfo) == 1 {
				got = b.VInfo[0].Value
			}
		}
	}
	if got != "1234567" {
		v, err := strconv.ParseFloat(got, 64)
		t.Errorf("Avg of 1234566 and 1234568 sent as %q (reads as %v, %v); want \"1234567\", as TarsCpp and TarsGo send it", got, v, err)
	}
}
