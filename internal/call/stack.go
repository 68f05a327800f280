package call

import "sync/atomic"

// Stack is a lock-free multi-producer, single-consumer stack of Calls linked through the calls
// themselves, so pushing allocates nothing. Producers (caller goroutines) Push; the loop takes
// everything at once with Drain, which returns the calls in push order.
type Stack struct {
	head atomic.Pointer[Call]
}

// Push adds c. Safe for concurrent use. It reports whether the stack was empty before, which
// tells the producer that the consumer may need a wakeup.
func (s *Stack) Push(c *Call) (wasEmpty bool) {
	for {
		old := s.head.Load()
		c.next = old
		if s.head.CompareAndSwap(old, c) {
			return old == nil
		}
	}
}

// Drain removes every call and returns them as a list in push order (oldest first), linked by
// Next. Must be called by the single consumer.
func (s *Stack) Drain() *Call {
	top := s.head.Swap(nil)
	// Reverse the LIFO chain into FIFO order.
	var prev *Call
	for top != nil {
		next := top.next
		top.next = prev
		prev, top = top, next
	}
	return prev
}

// Next returns the call after c in a list returned by Drain and unlinks c from it.
func (c *Call) Next() *Call {
	n := c.next
	c.next = nil
	return n
}
