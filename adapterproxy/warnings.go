package adapterproxy

import (
	"sync"
	"sync/atomic"
	"time"
)

// Warnings is the clock of the warnings about each endpoint, shared by the AdapterProxies of one
// Communicator (Options.Warnings): an endpoint is warned about at most once a second however many
// net threads and connections reach it (the rest go to debug level). Safe for concurrent use.
type Warnings struct {
	mu     sync.Mutex
	clocks map[string]*atomic.Int64 // by endpoint address: the call.Now of its last warning
}

// NewWarnings returns an empty Warnings.
func NewWarnings() *Warnings { return &Warnings{clocks: make(map[string]*atomic.Int64)} }

// maxWarnClocks is the number of endpoints whose clocks a Warnings keeps before it drops those
// that have not warned for a while: endpoints that come and go leave nothing behind.
const maxWarnClocks = 1024

// clock returns the clock of the warnings about addr.
func (w *Warnings) clock(addr string, now int64) *atomic.Int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.clocks[addr]; c != nil {
		return c
	}
	if len(w.clocks) >= maxWarnClocks {
		for k, c := range w.clocks {
			if now-c.Load() > int64(10*time.Second) {
				delete(w.clocks, k) // its holders keep limiting on their own
			}
		}
	}
	c := new(atomic.Int64)
	w.clocks[addr] = c
	return c
}

// warnDue reports whether a warning may be logged at now on the clock c, and takes it if so.
func warnDue(c *atomic.Int64, now int64) bool {
	last := c.Load()
	if last != 0 && now-last < int64(time.Second) {
		return false
	}
	return c.CompareAndSwap(last, now)
}
