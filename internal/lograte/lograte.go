package lograte

import (
	"sync"
	"sync/atomic"
	"time"
)

// MaxKeys bounds the keys a Limiter tracks. When it is full, keys not seen for ten intervals are
// dropped (their holders' Clocks go on limiting alone); if none is, the new key shares one Clock
// with the other keys that found it full.
const MaxKeys = 1024

// overflow is the key of the Clock shared by the keys that came when a Limiter was full.
const overflow = "\x00(other)"

// Limiter allows one line per key per interval. The zero value allows one a second; it is safe
// for concurrent use.
type Limiter struct {
	// Every is the interval; 0 means a second. Set it before the first Allow or Clock.
	Every time.Duration

	mu     sync.Mutex
	clocks map[string]*Clock
}

// Allow reports whether the line for key may be written now. When it may, left is the number of
// lines of key that Allow refused since the last it allowed: write it with the line.
func (l *Limiter) Allow(key string) (ok bool, left uint64) { return l.Clock(key).Allow() }

// Clock returns key's Clock, which its holder may keep and ask instead of Allow.
func (l *Limiter) Clock(key string) *Clock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.clocks[key]; c != nil {
		return c
	}
	if l.clocks == nil {
		l.clocks = make(map[string]*Clock)
	}
	if len(l.clocks) >= MaxKeys {
		now := nanotime()
		for k, c := range l.clocks {
			if now-c.last.Load() > 10*c.interval() {
				delete(l.clocks, k)
			}
		}
		if len(l.clocks) >= MaxKeys {
			key = overflow
			if c := l.clocks[key]; c != nil {
				return c
			}
		}
	}
	c := &Clock{Every: l.Every}
	l.clocks[key] = c
	return c
}

// Clock allows one line per interval for one key. The zero value allows one a second; it is safe
// for concurrent use.
type Clock struct {
	// Every is the interval; 0 means a second. Set it before the first Allow.
	Every time.Duration

	last atomic.Int64  // nanotime of the line last allowed; 0: none yet
	left atomic.Uint64 // lines refused since
}

// Allow reports whether the line may be written now. When it may, left is the number of lines
// Allow refused since the last it allowed: write it with the line.
func (c *Clock) Allow() (ok bool, left uint64) {
	now := nanotime()
	last := c.last.Load()
	if (last != 0 && now-last < c.interval()) || !c.last.CompareAndSwap(last, now) {
		c.left.Add(1)
		return false, 0
	}
	return true, c.left.Swap(0)
}

func (c *Clock) interval() int64 {
	if c.Every <= 0 {
		return int64(time.Second)
	}
	return int64(c.Every)
}

// epoch is nanotime's origin.
var epoch = time.Now()

// nanotime is the monotonic time since epoch, in nanoseconds, never 0.
func nanotime() int64 { return int64(time.Since(epoch)) + 1 }
