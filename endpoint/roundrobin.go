package endpoint

// roundRobin takes the active nodes in turn, like TarsCpp's getNextValidProxy. With no active
// node it still rotates over all of them, so that each blocked endpoint is retried in turn.
type roundRobin struct {
	next int // index to try first
}

// Pick implements Balancer.
func (b *roundRobin) Pick(nodes []Node, _ uint64) int {
	n := len(nodes)
	if n == 0 {
		return -1
	}
	if b.next >= n {
		b.next = 0
	}
	for i := 0; i < n; i++ {
		idx := b.next + i
		if idx >= n {
			idx -= n
		}
		if nodes[idx].Active {
			b.next = idx + 1
			return idx
		}
	}
	idx := b.next
	b.next = idx + 1
	return idx
}
