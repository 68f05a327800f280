package call

import (
	"sync"
	"testing"
)

func TestStackConcurrentPushSingleDrainer(t *testing.T) {
	const producers, each = 8, 2000
	var s Stack
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.Push(&Call{ID: int32(p*each + i)})
			}
		}()
	}
	seen := make(map[int32]bool)
	lastByProducer := make([]int32, producers)
	for i := range lastByProducer {
		lastByProducer[i] = -1
	}
	drain := func() {
		for c := s.Drain(); c != nil; c = c.Next() {
			if seen[c.ID] {
				t.Fatalf("id %d drained twice", c.ID)
			}
			seen[c.ID] = true
			p := c.ID / each
			if c.ID <= lastByProducer[p] {
				t.Fatalf("producer %d: id %d after %d: order lost", p, c.ID, lastByProducer[p])
			}
			lastByProducer[p] = c.ID
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			drain()
			if len(seen) != producers*each {
				t.Fatalf("drained %d calls, want %d", len(seen), producers*each)
			}
			return
		default:
			drain()
		}
	}
}
