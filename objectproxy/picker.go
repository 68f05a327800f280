package objectproxy

import (
	"fmt"
	"math/rand/v2"

	"github.com/tarscomm/tarscomm/endpoint"
)

// Picker is one balancing algorithm: it chooses the endpoint of each call among a servant's
// list on one net thread. An ObjectProxy owns its pickers and calls them on its loop goroutine
// only, so a picker keeps its state (a position, a ring, a random source) without locks.
//
// Build runs once per list change, before any Pick on the new list: a picker that needs a
// structure built from the list alone (a weighted list, a ring) takes the List's, built once for
// every thread (ahead by List.Prepare, through its registry line's prepare, or by the first pick
// that needs it), so that no loop builds it; per-thread state (a position) it resets here. Pick returns an index into the list (v.Len() > 1; the
// ObjectProxy answers lists of zero and one endpoint itself), choosing among the healthy
// endpoints the registry lists as active (View.Up, View.Ok) while there are any; when there are
// none it returns v.AnyOne(), so that calls keep going somewhere, in turn (that is how a blocked
// endpoint gets its retry). code is the call's hash code: a picker registered with Hash set is
// given the calls that carry one, the others the calls that carry none (code 0). Pick must not
// allocate.
type Picker interface {
	Build(v *View)
	Pick(v *View, code uint64) int
}

// backupPicker is implemented by pickers that choose a backup request's endpoint by their own
// measure (the load-aware ones: the lowest cost); the others send a backup to the next untried
// endpoint in turn.
type backupPicker interface {
	pickOther(v *View, avoid int32) int
}

// balancer is one line of the registry.
type balancer struct {
	name string
	// hash: the picker serves calls that carry a hash code (WithHash); a servant whose balancer
	// is a hash one spreads its other calls round robin. A servant whose balancer is not a hash
	// one hashes its hashed calls with TarsCpp's mod hash.
	hash bool
	new  func() Picker
	doc  string // one line, for Balancers' callers (docs, the debug page)
	// prepare builds ahead what the picker reads from a List (List.Prepare); nil: nothing.
	prepare func(l *List)
}

// balancers is the registry: the names `load-balance` accepts, in the order the docs list them.
// Adding a balancer is one file with its Picker and one line here (then regenerate conf's copy
// of the names: go test ./conf -run TestBalancerNames -update).
var balancers = []balancer{
	{"roundrobin", false, func() Picker { return new(roundRobin) }, "the healthy endpoints in turn (TarsCpp's default)", nil},
	{"weighted", false, func() Picker { return new(staticWeight) }, "TarsCpp's static-weight list by -w, whether or not the endpoints say -v 1", func(l *List) { l.weightedActive() }},
	{"random", false, func() Picker { return newRandom() }, "uniform among the healthy endpoints", nil},
	{"hash", true, func() Picker { return new(modHash) }, "TarsCpp's mod hash of the call's hash code (over the weighted list under -v 1)", func(l *List) {
		if l.l.static {
			l.weightedAll()
		}
	}},
	{"consistenthash", true, func() Picker { return new(ketamaRing) }, "TarsCpp's ketama ring of the call's hash code", func(l *List) { l.ketamaRing() }},
	{"least-inflight", false, func() Picker { return new(leastInflight) }, "the healthy endpoint with the fewest calls in flight, equal ones in turn", nil},
	{"p2c", false, func() Picker { return newP2C() }, "of two healthy endpoints drawn at random, the one of the lower latency x load cost", nil},
}

// Balancers returns the names of the registered balancers, in the registry's order, each with a
// one-line description. conf's validation of `load-balance` is generated from it.
func Balancers() (names, docs []string) {
	for _, b := range balancers {
		names = append(names, b.name)
		docs = append(docs, b.doc)
	}
	return names, docs
}

// lookup returns the registry line of name ("" is roundrobin).
func lookup(name string) (balancer, error) {
	if name == "" {
		name = balancers[0].name
	}
	for _, b := range balancers {
		if b.name == name {
			return b, nil
		}
	}
	names, _ := Balancers()
	return balancer{}, fmt.Errorf("unknown balancer %q (want one of %q)", name, names)
}

// pickers are an ObjectProxy's pickers, chosen from its balancer's name.
type pickers struct {
	spread Picker       // calls without a hash code
	hash   Picker       // calls with one
	static staticWeight // calls without one when every active endpoint says -v 1 (TarsCpp's rule)
	backup backupPicker // spread's, if it chooses backups itself
	up     chooser      // spread's, if it chooses among Up only: pick calls it without Pick's hop
}

func newPickers(name string) (pickers, error) {
	b, err := lookup(name)
	if err != nil {
		return pickers{}, err
	}
	var p pickers
	if b.hash {
		p.hash, p.spread = b.new(), new(roundRobin)
	} else {
		p.spread, p.hash = b.new(), new(modHash)
	}
	p.backup, _ = p.spread.(backupPicker)
	p.up, _ = p.spread.(chooser)
	return p, nil
}

// build tells every picker of a new list.
func (p *pickers) build(v *View) {
	p.spread.Build(v)
	p.hash.Build(v)
	if v.Static() {
		p.static.Build(v)
	}
}

// newRand returns a random source seeded from the runtime's.
func newRand() *rand.Rand { return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) }

// weightOf is an endpoint's static weight: -w, or 100 (TarsCpp's default) when absent, at most
// 100 (TarsCpp's TC_Endpoint clamps it so).
func weightOf(e endpoint.Endpoint) int {
	if e.Weight < 0 {
		return 100
	}
	return min(e.Weight, 100)
}
