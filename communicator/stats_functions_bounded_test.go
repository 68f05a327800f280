package communicator_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestStatsFunctionsPassedOnAreBounded: what a client counts per (servant, endpoint) must be bounded by what the
// client's code does, not by what it is handed. A relay (a gateway passing on the function names
// its own callers send: prometheus's doc names "a function name a caller passed on") calls one
// servant with whatever names come; each distinct name is one more row of Stats().Calls, a set of
// metric series and a row of the debug page, held for as long as the endpoint is listed (for a
// proxy string with endpoints: for good). The return codes of a row are bounded for that very
// reason (stats.MaxCodes: "each new one would hold memory (and a metric series, a row of the debug
// page) for good"), and so is tarsotel's span cache of the same (servant, function) pairs
// (maxStarts = 1024, "a server sees the function names its clients send, which need not be
// few"). Before, the function names were not: 3000 names, 3000 rows. Each net thread now counts
// stats.MaxFunctions apart and the rest under stats.OtherFunctions.
func TestStatsFunctionsPassedOnAreBounded(t *testing.T) {
	const names = 3000
	g := startGreeter(t, "a", serverOpt{})
	c := newComm(t, nil)
	sp := proxyTo(t, c, g)
	ctx := testCtx(t)
	for i := range names {
		// The server answers each unknown function -3 (RetNoFunc): one reply, one code.
		_, err := sp.InvokeRaw(ctx, fmt.Sprintf("relayed%05d", i), nil)
		var ce *servantproxy.ServerError
		if !errors.As(err, &ce) || ce.Code != codec.RetNoFunc {
			t.Fatalf("call %d: %v; want the server's RetNoFunc (%d)", i, err, codec.RetNoFunc)
		}
	}
	s := c.Stats()
	rows := 0
	for _, x := range s.Calls {
		if x.Servant == servant && x.Endpoint != "" {
			rows++
		}
	}
	t.Logf("%d distinct function names -> %d rows of Stats().Calls for one (servant, endpoint)", names, rows)
	if limit := c.Config().NetThread*stats.MaxFunctions + 1; rows > limit || !others(s) {
		t.Fatalf("after calls with %d distinct function names to one endpoint, Stats().Calls holds %d rows for that "+
			"(servant, endpoint) (each a metric series and a debug-page row, kept while the endpoint is listed); "+
			"want them bounded as return codes are (stats.MaxCodes, the rest counted under one row), "+
			"at most %d per net thread and an %q row", names, rows, stats.MaxFunctions, stats.OtherFunctions)
	}
}

// others reports whether s counts calls under stats.OtherFunctions.
func others(s stats.Snapshot) bool {
	for _, x := range s.Calls {
		if x.Function == stats.OtherFunctions && x.Counters.Calls() > 0 {
			return true
		}
	}
	return false
}
