package call

// Wheel is a hashed timing wheel of pending calls, owned by one loop goroutine. Inserting and
// removing a call is O(1) and allocation-free (the links live in the Call); Advance expires every
// call whose deadline has passed, visiting each slot once per turn of the wheel.
//
// Slot width is the timeout check interval, so a call is expired at most one interval after its
// deadline, provided Advance is called every interval.
type Wheel struct {
	tick  int64   // slot width in nanoseconds
	slots []*Call // heads of doubly linked lists
	mask  int64
	cur   int64 // the last tick Advance has processed
	n     int   // calls in the wheel
	// removed counts removals: Advance compares it around each Expire to learn whether the
	// Owner took other calls out (and so may have completed, and its callers recycled, the
	// call Advance meant to visit next).
	removed uint64
}

// NewWheel returns a wheel whose slots are tick nanoseconds wide, with enough slots that
// typical deadlines land within one turn (calls further out simply wait extra turns).
func NewWheel(tick int64, now int64) *Wheel {
	if tick <= 0 {
		tick = int64(10e6)
	}
	const nslots = 1024
	return &Wheel{tick: tick, slots: make([]*Call, nslots), mask: nslots - 1, cur: now/tick - 1}
}

// Len returns the number of calls in the wheel.
func (w *Wheel) Len() int { return w.n }

// Add inserts c, which must have a Deadline and not be in the wheel.
func (w *Wheel) Add(c *Call) {
	t := c.Deadline / w.tick
	if t <= w.cur {
		t = w.cur + 1 // already due: expire on the next Advance
	}
	slot := int32(t & w.mask)
	c.tslot = slot
	c.tprev = nil
	c.tnext = w.slots[slot]
	if c.tnext != nil {
		c.tnext.tprev = c
	}
	w.slots[slot] = c
	c.timerArmed = true
	w.n++
}

// Remove takes c out of the wheel; it does nothing if c is not in it.
func (w *Wheel) Remove(c *Call) {
	if !c.timerArmed {
		return
	}
	if c.tprev != nil {
		c.tprev.tnext = c.tnext
	} else {
		w.slots[c.tslot] = c.tnext
	}
	if c.tnext != nil {
		c.tnext.tprev = c.tprev
	}
	c.tprev, c.tnext, c.timerArmed = nil, nil, false
	w.n--
	w.removed++
}

// Advance expires, through their Owner, every call whose deadline is at or before now. Owners
// may Remove other calls while Advance runs.
func (w *Wheel) Advance(now int64) {
	target := now / w.tick
	if target < w.cur+1 {
		return
	}
	from := w.cur + 1
	if target-from > w.mask {
		from = target - w.mask // one whole turn visits every slot
	}
	// The current tick's slot may still hold calls due later within this tick: leave cur just
	// before it so that the next Advance visits it again.
	w.cur = target - 1
	if w.n == 0 {
		return
	}
	for t := from; t <= target; t++ {
		slot := t & w.mask
		for c := w.slots[slot]; c != nil; {
			next := c.tnext
			if c.Deadline <= now {
				w.Remove(c)
				removed := w.removed
				c.Owner.Expire(c)
				if w.removed != removed {
					// Expire took other calls out (a connection closed by the expiry fails
					// its calls): next may be one of them, ended and recycled by its caller
					// already, so nothing of it may be read. Start the slot again.
					next = w.slots[slot]
				}
			}
			c = next
		}
	}
}
