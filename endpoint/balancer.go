package endpoint

import (
	"fmt"
	"math/rand/v2"
)

// Node is one candidate as a Balancer sees it: an endpoint and whether its connection is
// currently considered healthy.
type Node struct {
	Endpoint Endpoint
	// Active is false while the endpoint is blocked by the health rules (too many timeouts or
	// consecutive failures) or its connection is known broken.
	Active bool
	// Inflight and Latency are the node's load, read by the load-aware balancers
	// ("least-inflight", "p2c") and ignored by the others: the calls in flight to it, and its
	// peak-EWMA reply latency in nanoseconds (0: not measured).
	Inflight int
	Latency  float64
}

// Balancer chooses the node for the next call: the second layer of TARS load balancing, run by
// an ObjectProxy's EndpointManager on its net thread.
//
// A Balancer keeps state between calls and is not safe for concurrent use: each ObjectProxy owns
// one and calls it from its net thread only. Pick does not allocate, except that a balancer
// keeping per-node state rebuilds it (once) after the node list changes.
type Balancer interface {
	// Pick returns an index into nodes, or -1 if nodes is empty. Inactive nodes are skipped while
	// any node is active; when none is active, Pick still returns one (TarsCpp then tries one
	// anyway, which is how a blocked endpoint gets its retry). key is the call's hash code;
	// balancers that do not hash ignore it.
	Pick(nodes []Node, key uint64) int
}

const (
	nameRoundRobin     = "roundrobin"
	nameWeighted       = "weighted"
	nameRandom         = "random"
	nameHash           = "hash"
	nameConsistentHash = "consistenthash"
	nameLeastInflight  = "least-inflight"
	nameP2C            = "p2c"
)

// Names lists the balancer names NewBalancer accepts ("" aside), in a fixed order. conf keeps a
// copy of it to validate "load-balance"; a test there keeps the two equal. Do not modify it.
var Names = []string{nameRoundRobin, nameWeighted, nameRandom, nameHash, nameConsistentHash, nameLeastInflight, nameP2C}

// NewBalancer returns a new balancer:
//
//   - "roundrobin" (also ""): the active nodes in turn (TarsCpp's default, getNextValidProxy).
//   - "weighted": smooth weighted round robin by Endpoint.Weight; see weighted.go for how absent
//     and zero weights count.
//   - "random": uniform among the active nodes.
//   - "hash": node key % len(nodes), with a deterministic fallback among the active nodes when
//     that one is inactive (TarsCpp's getHashProxyForNormal).
//   - "consistenthash": a ring of virtual nodes keyed by Endpoint.Addr(); adding or removing one
//     of n endpoints moves about 1/n of the keys, and an inactive endpoint's keys go to the next
//     active one on the ring.
//   - "least-inflight": the active node with the fewest calls in flight (Node.Inflight), equal
//     ones in turn.
//   - "p2c": the power of two choices: of two active nodes drawn at random, the one of the lower
//     LoadCost (peak-EWMA latency weighted by calls in flight, after Finagle's).
//
// An unknown name is an error naming it: the caller's configuration is wrong.
func NewBalancer(name string) (Balancer, error) {
	switch name {
	case "", nameRoundRobin:
		return &roundRobin{}, nil
	case nameWeighted:
		return &weighted{}, nil
	case nameRandom:
		return newRandom(rand.Uint64(), rand.Uint64()), nil
	case nameHash:
		return hashBalancer{}, nil
	case nameConsistentHash:
		return &consistentHash{}, nil
	case nameLeastInflight:
		return &leastInflight{}, nil
	case nameP2C:
		return newP2C(rand.Uint64(), rand.Uint64()), nil
	}
	return nil, fmt.Errorf("endpoint: unknown balancer %q (want one of %q)", name, Names)
}

// countActive returns the number of active nodes.
func countActive(nodes []Node) int {
	n := 0
	for i := range nodes {
		if nodes[i].Active {
			n++
		}
	}
	return n
}

// nthActive returns the index of the k-th (from 0) active node; k must be below countActive.
func nthActive(nodes []Node, k int) int {
	for i := range nodes {
		if nodes[i].Active {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return -1
}
