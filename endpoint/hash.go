package endpoint

// hashBalancer maps a key onto the node list by modulo, like TarsCpp's getHashProxyForNormal: key
// goes to node key % len(nodes), so one key always reaches one endpoint while the list stays the
// same (its order matters: keep it stable, e.g. sorted). If that node is inactive, the key goes to
// active node number key % (active count), in list order: deterministic, though a change of any
// node's state may move it. With no active node it returns key % len(nodes). It keeps no state.
type hashBalancer struct{}

// Pick implements Balancer.
func (hashBalancer) Pick(nodes []Node, key uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	idx := int(key % uint64(n))
	if nodes[idx].Active {
		return idx
	}
	k := countActive(nodes)
	if k == 0 {
		return idx
	}
	return nthActive(nodes, int(key%uint64(k)))
}
