package endpoint

import (
	"cmp"
	"slices"
	"strconv"
)

// tarsProto is the protocol's number in TarsCpp's TC_Endpoint::EType and in EndpointF.istcp:
// UDP 0, TCP 1, SSL 2.
func tarsProto(p Protocol) int {
	switch p {
	case UDP:
		return 0
	case SSL:
		return 2
	}
	return 1
}

// TarsKey returns the key TarsCpp orders and compares an object's endpoints by (EndpointInfo's
// cmpDesc): "<istcp>:<host>:<port>", istcp being 0 for udp, 1 for tcp, 2 for ssl. Two endpoints
// with equal keys are the same endpoint to TarsCpp, whatever their other options.
func (e Endpoint) TarsKey() string {
	return string(e.AppendTarsKey(make([]byte, 0, len(e.Host)+10)))
}

// AppendTarsKey appends e.TarsKey() to b: many keys can share one buffer.
func (e Endpoint) AppendTarsKey(b []byte) []byte {
	b = strconv.AppendInt(b, int64(tarsProto(e.Proto)), 10)
	b = append(b, ':')
	b = append(b, e.Host...)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(e.Port), 10)
}

// SortTars sorts eps in TarsCpp's order: by TarsKey, as strings (so "1:10.0.0.10:1" sorts before
// "1:10.0.0.2:1", as in TarsCpp). It is the order mod-hash routing indexes into; the sort is
// stable, so equal keys keep their order.
func SortTars(eps []Endpoint) {
	// Sort (key, index) pairs, then permute: each key is computed once and compared as a
	// string, with no hashing per comparison.
	type keyed struct {
		key string
		i   int
	}
	ks := make([]keyed, len(eps))
	for i, e := range eps {
		ks[i] = keyed{e.TarsKey(), i}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	sorted := make([]Endpoint, len(eps))
	for j, k := range ks {
		sorted[j] = eps[k.i]
	}
	copy(eps, sorted)
}
