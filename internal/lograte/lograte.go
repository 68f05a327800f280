package lograte

import (
	"sync"
	"time"
)

// MaxKeys bounds the keys a Limiter tracks. When it is full, keys not seen for ten intervals are
// dropped; if none is, the new key shares one entry with the other keys that found it full.
const MaxKeys = 1024

// overflow is the entry of the keys that came when a Limiter was full.
const overflow = "\x00(other)"

// Limiter allows one line per key per interval. The zero value allows one a second; it is safe
// for concurrent use.
type Limiter struct {
	// Every is the interval; 0 means a second. Set it before the first Allow.
	Every time.Duration

	mu   sync.Mutex
	keys map[string]*entry
}

type entry struct {
	last time.Time // when a line was last allowed
	left uint64    // lines refused since
}

// Allow reports whether the line for key may be written now. When it may, left is the number of
// lines of key that Allow refused since the last it allowed: write it with the line.
func (l *Limiter) Allow(key string) (ok bool, left uint64) {
	now := time.Now()
	every := l.Every
	if every <= 0 {
		every = time.Second
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		if l.keys == nil {
			l.keys = make(map[string]*entry)
		}
		if len(l.keys) >= MaxKeys {
			for k, x := range l.keys {
				if now.Sub(x.last) > 10*every {
					delete(l.keys, k)
				}
			}
			if len(l.keys) >= MaxKeys {
				key = overflow
				e = l.keys[key]
			}
		}
		if e == nil {
			l.keys[key] = &entry{last: now}
			return true, 0
		}
	}
	if now.Sub(e.last) < every {
		e.left++
		return false, 0
	}
	left = e.left
	e.last, e.left = now, 0
	return true, left
}
