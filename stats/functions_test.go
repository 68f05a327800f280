package stats

import (
	"fmt"
	"testing"
)

// TestFunctionsBounded: one endpoint's recorder counts MaxFunctions functions apart and every
// later one under OtherFunctions, the first ones still counted under their names.
func TestFunctionsBounded(t *testing.T) {
	var r Recorder
	e := r.Endpoint("A.B.Obj", "127.0.0.1:1")
	const extra = 500
	for i := range MaxFunctions + extra {
		e.Record(fmt.Sprintf("f%05d", i), OK, 0, 0)
	}
	e.Record("f00000", OK, 0, 0) // a first one again
	e.Record(fmt.Sprintf("f%05d", MaxFunctions), OK, 0, 0)
	s := r.Snapshot()
	if len(s.Calls) != MaxFunctions+1 {
		t.Fatalf("%d functions recorded -> %d rows; want %d (the first %d, and %q)", MaxFunctions+extra, len(s.Calls), MaxFunctions+1, MaxFunctions, OtherFunctions)
	}
	byName := map[string]uint64{}
	for _, c := range s.Calls {
		byName[c.Key.Function] = c.Counters.Calls()
	}
	if byName["f00000"] != 2 || byName[fmt.Sprintf("f%05d", MaxFunctions-1)] != 1 {
		t.Errorf("the first functions: f00000 %d calls, f%05d %d; want 2 and 1", byName["f00000"], MaxFunctions-1, byName[fmt.Sprintf("f%05d", MaxFunctions-1)])
	}
	if got := byName[OtherFunctions]; got != extra+1 {
		t.Errorf("%q counted %d calls; want %d", OtherFunctions, got, extra+1)
	}
}
