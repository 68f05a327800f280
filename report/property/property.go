package property

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

type kind uint8

const (
	kindSum kind = iota
	kindAvg
	kindDistr
	kindMax
	kindMin
	kindCount
)

var kindNames = [...]string{"Sum", "Avg", "Distr", "Max", "Min", "Count"}

// Policy is one way of aggregating a property's values over an interval.
type Policy struct {
	kind   kind
	bounds []int64
}

// Name returns the policy's name as TARS sends it: "Sum", "Avg", "Distr", "Max", "Min" or
// "Count".
func (p Policy) Name() string { return kindNames[p.kind] }

// Sum adds the values up.
func Sum() Policy { return Policy{kind: kindSum} }

// Avg is the mean of the values.
func Avg() Policy { return Policy{kind: kindAvg} }

// Max is the greatest value, 0 if none was greater.
func Max() Policy { return Policy{kind: kindMax} }

// Min is the least non-zero value.
func Min() Policy { return Policy{kind: kindMin} }

// Count is the number of values.
func Count() Policy { return Policy{kind: kindCount} }

// Distr counts the values by bucket: a value counts in the first bound greater than it, one at
// or above the last bound in "max" (TarsCpp's distr). The bounds are sorted (and duplicates
// dropped) here.
func Distr(bounds ...int64) Policy {
	b := slices.Clone(bounds)
	slices.Sort(b)
	return Policy{kind: kindDistr, bounds: slices.Compact(b)}
}

// Property is a named value reported by its policies. Safe for concurrent use.
type Property struct {
	name     string
	policies []Policy

	mu     sync.Mutex
	sum    int64
	count  int64
	max    int64
	min    int64
	counts [][]int64 // per Distr policy, by bound
}

// Name returns the property's name.
func (p *Property) Name() string { return p.name }

// Report adds one value.
func (p *Property) Report(v int64) {
	p.mu.Lock()
	p.sum += v
	p.count++
	if v > p.max {
		p.max = v
	}
	if v != 0 && (p.min == 0 || v < p.min) {
		p.min = v
	}
	for i, pol := range p.policies {
		if pol.kind != kindDistr {
			continue
		}
		j, found := slices.BinarySearch(pol.bounds, v) // the first bound >= v
		if found {
			j++ // the first bound > v (v+1 would overflow at math.MaxInt64)
		}
		p.counts[i][j]++ // j == len(bounds): at or past the last bound, TarsCpp's "max" bucket
	}
	p.mu.Unlock()
}

// Info is one policy's value of an interval, as sent in StatPropInfo.
type Info struct {
	Policy, Value string
}

// Take returns the values of the interval by policy, in the order the policies were given (a Min
// of "0" left out), and starts a new interval.
func (p *Property) Take() []Info {
	p.mu.Lock()
	sum, count, mx, mn := p.sum, p.count, p.max, p.min
	var distr [][]int64
	for i := range p.counts {
		if p.counts[i] != nil {
			distr = append(distr, slices.Clone(p.counts[i]))
			clear(p.counts[i])
		} else {
			distr = append(distr, nil)
		}
	}
	p.sum, p.count, p.max, p.min = 0, 0, 0, 0
	p.mu.Unlock()

	out := make([]Info, 0, len(p.policies))
	for i, pol := range p.policies {
		var v string
		switch pol.kind {
		case kindSum:
			v = strconv.FormatInt(sum, 10)
		case kindAvg:
			v = "0"
			if count != 0 {
				v = decimal(float64(sum) / float64(count))
			}
		case kindMax:
			v = strconv.FormatInt(mx, 10)
		case kindMin:
			if mn == 0 {
				continue
			}
			v = strconv.FormatInt(mn, 10)
		case kindCount:
			v = strconv.FormatInt(count, 10)
		case kindDistr:
			var b strings.Builder
			for j, bound := range pol.bounds {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatInt(bound, 10))
				b.WriteByte('|')
				b.WriteString(strconv.FormatInt(distr[i][j], 10))
			}
			if len(pol.bounds) > 0 {
				b.WriteByte(',')
			}
			b.WriteString("max|")
			b.WriteString(strconv.FormatInt(distr[i][len(pol.bounds)], 10))
			v = b.String()
		}
		out = append(out, Info{Policy: pol.Name(), Value: v})
	}
	return out
}

// Registry holds properties by name. Safe for concurrent use.
type Registry struct {
	mu    sync.Mutex
	props map[string]*Property
	order []*Property
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{props: make(map[string]*Property)} }

// Default is the Registry of New.
var Default = NewRegistry()

// New returns the property name of Default, creating it with policies on first use.
func New(name string, policies ...Policy) *Property { return Default.New(name, policies...) }

// New returns the property name, creating it with policies on first use; a later call with the
// same name returns the first property, whatever its policies.
func (r *Registry) New(name string, policies ...Policy) *Property {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.props[name]; p != nil {
		return p
	}
	p := &Property{name: name, policies: slices.Clone(policies), counts: make([][]int64, len(policies))}
	for i, pol := range policies {
		if pol.kind == kindDistr {
			p.counts[i] = make([]int64, len(pol.bounds)+1) // and the values past the last bound
		}
	}
	r.props[name] = p
	r.order = append(r.order, p)
	return p
}

// Properties returns the properties, in the order they were created.
func (r *Registry) Properties() []*Property {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// decimal formats an average as TarsCpp's TC_Common::tostr(double) does: fixed notation with six
// decimals (std::to_string), its trailing zeros dropped, and the point with them ("195.857143",
// "1234567", "10.5"). Six significant digits ('g', 6) sent 1234567 as "1.23457e+06".
func decimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', 6, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
