package faultproxy

// Hangup closes every forwarded connection open now with a FIN on both sides (the client's and
// the upstream's), after the bytes already handed to the kernel, and returns how many there were.
// To the client this is a server closing an idle connection in an orderly way, where Cut is a
// crash or a middlebox reset. New connections are forwarded as before.
func (p *Proxy) Hangup() int {
	p.mu.Lock()
	open := make([]*pair, 0, len(p.pairs))
	for c := range p.pairs {
		open = append(open, c)
	}
	p.mu.Unlock()
	n := 0
	for _, c := range open {
		if c.close(false) {
			n++
		}
	}
	return n
}
