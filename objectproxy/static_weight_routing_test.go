package objectproxy_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/endpoint"
)

// staticEP returns a -v 1 endpoint on 127.0.0.1 of weight w whose port this test opened and
// closed (never dialled by a pick).
func staticEP(t *testing.T, w int) endpoint.Endpoint {
	e := closedEndpoint(t)
	e.Weight, e.WeightType = w, endpoint.WeightStatic
	return e
}

// TestStaticWeightDownKeepsRatio: static weights 100 (x), 10 (b) and 1 (c), all -v
// 1; x is down (its connect refused, reconnect backoff running). TarsCpp's getWeightedForNormal
// walks its whole weighted list from the position on until it meets an active endpoint, so the
// calls x would have taken go to b and c as the list orders them: b gets 10 for c's 1, and so
// here. Before, staticWeight.Pick gave up after 8 misses in a row and fell back to round robin over
// the healthy endpoints, and x's entries come in runs of about 9: c, of weight 1, got a share
// close to b's.
func TestStaticWeightDownKeepsRatio(t *testing.T) {
	x, b, c := staticEP(t, 100), staticEP(t, 10), staticEP(t, 1)
	p := newPicker(t, "roundrobin", []endpoint.Endpoint{x, b, c})
	const picks = 1100
	var m map[string]int
	p.refuse(x, func() { m = p.counts(false, picks) })
	if m[x.Addr()] != 0 {
		t.Fatalf("picks went to the refusing endpoint: %v", m)
	}
	// TarsCpp: b:c = 10:1, so c gets about 100 of 1100.
	if m[c.Addr()] > 2*picks/11 {
		t.Fatalf("with the weight-100 endpoint down, %d picks went %d to b (weight 10) and %d to c (weight 1); "+
			"TarsCpp keeps the 10:1 ratio (about %d to c)", picks, m[b.Addr()], m[c.Addr()], picks/11)
	}
}

// TestStaticTypeFromActiveOnly: TarsCpp decides static weighting from the registry's
// ACTIVE endpoints only (QueryEpBase::doEndpoints computes bSameWeightType over activeEp; the
// inactive ones are not looked at), then drops the endpoints of weight <= 0 from both lists. The
// active list is b (-w 100 -v 1) and c (-w 10 -v 1); one inactive endpoint (a stopped node) still
// says -v 0. TarsCpp weights the calls 10:1, and so here. Before, NewList required every
// endpoint, active and inactive, to say -v 1, so it balanced round robin, 1:1.
func TestStaticTypeFromActiveOnly(t *testing.T) {
	b, c := staticEP(t, 100), staticEP(t, 10)
	d := closedEndpoint(t) // -v 0, weight absent
	p := newPicker(t, "roundrobin", []endpoint.Endpoint{b, c})
	const picks = 1100
	var m map[string]int
	runOn(p.th, func() {
		p.o.Update([]endpoint.Endpoint{b, c}, []endpoint.Endpoint{d})
		m = p.counts(false, picks)
	})
	if m[b.Addr()] != 1000 || m[c.Addr()] != 100 {
		t.Fatalf("active -w 100 -v 1 and -w 10 -v 1 with an inactive -v 0 endpoint: %d picks went b %d, c %d; "+
			"TarsCpp's weight type comes from the active endpoints (static): b 1000, c 100", picks, m[b.Addr()], m[c.Addr()])
	}
}
