package endpoint

// defaultWeight is the weight of an endpoint without -w: TarsCpp gives such an endpoint 100 when
// static weighting is on, and caps weights at 100 (tarscomm does not cap: weights are relative).
const defaultWeight = 100

// weighted is smooth weighted round robin (the algorithm of nginx's upstream module): each pick
// adds every candidate's weight to its current weight, takes the candidate with the largest
// current weight and subtracts the candidates' total from it. Over any run of W picks, W the sum
// of the weights, each node is picked exactly weight times, and the picks are interleaved rather
// than bunched.
//
// Weights come from Endpoint.Weight:
//
//   - w > 0 counts as w;
//   - absent (negative, -1 from the parser) counts as 100, TarsCpp's value for an endpoint
//     without -w;
//   - 0 means "send nothing here" while any active node has a positive weight (TarsCpp's static
//     weighting drops endpoints of weight 0). If every active node weighs 0 they share equally,
//     and if none is active all nodes share equally.
//
// The -v weight type is not consulted: choosing "weighted" is the switch.
type weighted struct {
	// current holds each node's current weight, by index. It is reset when the number of nodes
	// changes; after a change of the same size the old values only shift the first few picks.
	current []int
}

// Candidate sets of weighted.pick, tried in order.
const (
	weightedPositive = iota // active nodes with a positive weight, by weight
	weightedActive          // active nodes, equally
	weightedAll             // all nodes, equally
)

// Pick implements Balancer.
func (b *weighted) Pick(nodes []Node, _ uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	if len(b.current) != n {
		b.current = make([]int, n)
	}
	if i := b.pick(nodes, weightedPositive); i >= 0 {
		return i
	}
	if i := b.pick(nodes, weightedActive); i >= 0 {
		return i
	}
	return b.pick(nodes, weightedAll)
}

// pick runs one round of smooth weighted round robin over the candidates of set; -1 if there are
// none.
func (b *weighted) pick(nodes []Node, set int) int {
	total, best := 0, -1
	for i := range nodes {
		w := 1
		switch set {
		case weightedPositive:
			if !nodes[i].Active {
				continue
			}
			w = nodes[i].Endpoint.Weight
			if w < 0 {
				w = defaultWeight
			}
			if w == 0 {
				continue
			}
		case weightedActive:
			if !nodes[i].Active {
				continue
			}
		}
		b.current[i] += w
		total += w
		if best < 0 || b.current[i] > b.current[best] {
			best = i
		}
	}
	if best >= 0 {
		b.current[best] -= total
	}
	return best
}
