package bufpool

import (
	"math/bits"
	"runtime"
	"sync"
	"time"
)

// MinSize is the smallest capacity the pool deals in: Get of less returns a fresh buffer of
// exactly the asked capacity, and Put of a smaller buffer drops it.
const MinSize = 64 << 10

// maxShift bounds the classes: the largest holds 1.75<<maxShift bytes; bigger buffers are not
// pooled.
const maxShift = 30

// steps is the number of classes per doubling.
const steps = 4

var pools [(maxShift - 16 + 1) * steps]sync.Pool

// Buffers of a megabyte and more are also kept outside sync.Pool, which empties at every garbage
// collection: at several megabytes per call a collection comes every few calls, and the pool
// would be empty whenever it is needed. All classes together keep at most keepBytes, each at most
// keepPerClass buffers; beyond that buffers go to sync.Pool.
//
// What is kept follows the load: at the first collection at least trimEvery after the last trim,
// each class gives back half of the buffers that stayed in it since then (its low-water mark,
// low), rounded up. A class in use keeps what its calls cycle through; a class the program
// stopped using empties within a few trims, which frees its bytes for the classes in use; an idle
// program gives everything back too, as the runtime collects at least every two minutes. Trims
// are spaced in time, not one per collection: at megabytes per call a collection comes every
// few calls, too soon to tell a buffer in use from a spare one (trimming at every collection cost
// 8 MiB calls a tenth of their rate).
const (
	keepMin      = 1 << 20
	keepPerClass = 64
	keepBytes    = 64 << 20
)

// trimEvery is the least time between trims (guarded by kept.mu; tests change it).
var trimEvery = 5 * time.Second

var kept struct {
	mu    sync.Mutex
	bytes int
	bufs  [len(pools)][][]byte
	low   [len(pools)]int // the fewest buffers class i held since the last trim
	armed bool            // the trim runs after collections (armTrim)
	last  time.Time       // the last trim
}

// take returns a kept buffer of class i, or nil.
func take(i int) []byte {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	l := kept.bufs[i]
	if len(l) == 0 {
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = nil
	kept.bufs[i] = l[:len(l)-1]
	kept.bytes -= cap(b)
	kept.low[i] = min(kept.low[i], len(l)-1)
	return b
}

// keep stores b as a buffer of class i if there is room, and reports whether it did.
func keep(i int, b []byte) bool {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if len(kept.bufs[i]) >= keepPerClass || kept.bytes+cap(b) > keepBytes {
		return false
	}
	if !kept.armed {
		kept.armed, kept.last = true, time.Now()
		armTrim()
	}
	kept.bufs[i] = append(kept.bufs[i], b)
	kept.bytes += cap(b)
	return true
}

// trim gives back, in every class, half of the buffers (rounded up) that no Get took since the
// last trim: the oldest, at the bottom of the class's stack.
func trim() {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	trimLocked()
}

// trimLocked is trim for a holder of kept.mu.
func trimLocked() {
	kept.last = time.Now()
	for i, l := range kept.bufs {
		if n := (kept.low[i] + 1) / 2; n > 0 {
			for _, b := range l[:n] {
				kept.bytes -= cap(b)
			}
			l = l[:copy(l, l[n:])]
			clear(kept.bufs[i][len(l):])
			kept.bufs[i] = l
		}
		kept.low[i] = len(l)
	}
}

// armTrim has afterCollection run after the next garbage collection, and again after every one
// that follows: a cleanup on an object nobody references runs once the collector found it
// unreachable, and re-arms itself.
func armTrim() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(struct{}) {
		afterCollection()
		armTrim()
	}, struct{}{})
}

// afterCollection trims when the last trim is at least trimEvery old.
func afterCollection() {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if time.Since(kept.last) >= trimEvery {
		trimLocked()
	}
}

// sentinel is the object whose collection marks a cycle: large enough, and holding a pointer,
// not to be a tiny allocation, which the runtime may never collect on its own.
type sentinel struct {
	_ *byte
	_ [16]byte
}

// slack is what every class holds beyond its nominal size (a power of two, or one plus a
// quarter, a half or three quarters of it): a frame is a body plus a header of tens of bytes and
// the encoder's headroom (a few hundred), and bodies are often a round size (1 MiB chunks), so
// without it such a frame would take the next class, a quarter larger than the body.
const slack = 8 << 10

// classSize returns the capacity of class i.
func classSize(i int) int {
	shift := 16 + i/steps
	base := 1 << shift
	return base + (base/steps)*(i%steps) + slack
}

// classOf returns the smallest class whose buffers hold n bytes, or -1 when n is beyond the
// largest class.
func classOf(n int) int {
	n -= slack
	if n <= MinSize {
		return 0
	}
	shift := bits.Len(uint(n-1)) - 1 // 1<<shift < n <= 1<<(shift+1)
	base := 1 << shift
	step := (n - base + base/steps - 1) / (base / steps) // 1..steps
	i := (shift-16)*steps + step
	if i >= len(pools) {
		return -1
	}
	return i
}

// Get returns a buffer of length 0 and capacity at least n. It is recycled when n is at least
// MinSize; smaller requests get a fresh allocation.
func Get(n int) []byte {
	if n < MinSize {
		return make([]byte, 0, n)
	}
	i := classOf(n)
	if i < 0 {
		return make([]byte, 0, n)
	}
	if classSize(i) >= keepMin {
		if b := take(i); b != nil {
			return b[:0]
		}
	}
	if p, ok := pools[i].Get().(*[]byte); ok {
		b := (*p)[:0]
		*p = nil
		boxes.Put(p)
		return b
	}
	return make([]byte, 0, classSize(i))
}

// Put gives b back for reuse. Only the last owner of b may call it, and must not touch b
// afterwards. Buffers that are not the capacity of a class (not obtained from Get) are kept in
// the largest class they fill, or dropped when smaller than MinSize.
func Put(b []byte) {
	c := cap(b)
	if c < MinSize {
		return
	}
	i := classOf(c)
	if i < 0 {
		return
	}
	if classSize(i) > c {
		i-- // c is between two classes: it serves the smaller one
		if i < 0 {
			return // smaller than the smallest class
		}
	}
	if classSize(i) >= keepMin && keep(i, b[:0]) {
		return
	}
	p, _ := boxes.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	*p = b[:0]
	pools[i].Put(p)
}

// boxes recycles the pointers that carry buffers through the pools, so that Put does not
// allocate one per buffer.
var boxes sync.Pool
