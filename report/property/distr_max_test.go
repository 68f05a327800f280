package property_test

import (
	"fmt"
	"testing"

	"github.com/tarscomm/tarscomm/protocol/propertyf"
	"github.com/tarscomm/tarscomm/report/property"
)

// TestPropertyDistrMaxBucket: TarsCpp's Distr (PropertyReport::distr::set/get) counts a
// value at or above the last bound in a "max" bucket and sends it last: "b1|n1,...,bn|nn,max|m"
// (PropertyF's "b1|n1,b2|n2,...,max|n"). Here 2 of 4 values reported are at or above the last
// bound: the report sent to the property service carries them as "max|2". Before, they were
// counted in no bucket and lost.
func TestPropertyDistrMaxBucket(t *testing.T) {
	impl, prx := start(t)
	reg := property.NewRegistry()
	p := reg.New("rsp", property.Distr(10, 100))
	for _, v := range []int64{5, 50, 100, 5000} {
		p.Report(v)
	}
	r := property.NewReporter(reg, prx, property.Options{ModuleName: "Test.Server"})
	if err := r.Close(); err != nil { // Close without Start sends the interval's values once
		t.Fatal(err)
	}
	var got string
	for _, m := range impl.take() {
		for h, b := range m {
			if h.PropertyName == "rsp" {
				got = fmt.Sprint(b.VInfo)
			}
		}
	}
	want := fmt.Sprint([]propertyf.StatPropInfo{{Policy: "Distr", Value: "10|1,100|1,max|2"}})
	if got != want {
		t.Errorf("Distr(10, 100) of 5, 50, 100, 5000 sent %s; want %s (TarsCpp: the values at or above the last bound in max|n)", got, want)
	}
}
