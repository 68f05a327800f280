package call

import "sync/atomic"

// Pair makes the two calls of a backup request (the first call and its backup, the same request
// sent to another endpoint) count as the one call they are, in the Recorder: a reply is counted
// when it comes, and the other half is not (whether it replied, failed or was dropped); without
// a reply, the half that ends last is counted, whose error is the pair's, as its caller gets it,
// and the other half is not. A refusal (Call.Unrun: -9, the call did not run) is no reply here:
// it is counted only as the last half, as a failure is. The backup request logic (servantproxy)
// gives both halves the same Pair (Call.Pair), opening each before it submits it; both end on
// the same loop (the backup goes to the first call's net thread), which alone reads counted.
//
// The backup is opened with Join, which refuses once the first call has been counted as the
// last half (it ended on the loop just as the backup timer fired): that backup is not sent, and
// the pair is not counted twice.
type Pair struct {
	open    atomic.Int32 // halves opened and not ended
	counted bool         // a half's reply was counted (loop only)
	half    *Call        // the half counted (written on the loop before that half is signalled)
	failed  error        // the error of a half that ended first, uncounted, with a failure (loop only)
}

// Counted returns the half whose outcome was counted (nil: none yet). A sync caller that has
// seen both halves end reads it to return the outcome the Recorder counted.
func (p *Pair) Counted() *Call { return p.half }

// Open records that a half of the pair is being sent: call it before the half's Submit.
func (p *Pair) Open() { p.open.Add(1) }

// Join is Open for the second half (the backup): it opens it only while the first is open, and
// reports whether it did. False means the first half has ended and been counted (as the last
// half: its error is the pair's); the backup must not be sent.
func (p *Pair) Join() bool {
	for {
		n := p.open.Load()
		if n == 0 {
			return false
		}
		if p.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Close takes back an Open whose half was not submitted after all (Submit refused it).
func (p *Pair) Close() { p.open.Add(-1) }

// counts reports whether the half ending now with err (nil: a reply) is the pair's count. Called
// once per half, from Complete on the loop, however the half ends.
func (p *Pair) counts(c *Call, err error) bool {
	last := p.open.Add(-1) == 0
	switch {
	case p.counted:
		return false
	case err == nil && !c.Unrun():
		p.counted, p.half = true, c
		return true
	case last:
		p.half = c
		return true
	}
	if err != nil && err != errAbandoned {
		p.failed = err
	}
	return false
}

// Unsent returns the error a backup that found no endpoint to go to ends with: the first half's
// failure if that half has failed already (the backup, ending last, carries the pair's outcome,
// and it never ran: the outcome is the first call's), and ErrNoEndpoint otherwise (the first
// half is still pending, and ends last). Loop only.
func (p *Pair) Unsent() error {
	if p.failed != nil {
		return p.failed
	}
	return ErrNoEndpoint
}
