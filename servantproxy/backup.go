package servantproxy

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// backup is a servant's backup-request policy (brpc's backup requests): a sync call of an
// idempotent function that has had no reply after delay is sent again, to another endpoint of
// the same net thread's ObjectProxy (objectproxy.Hedge); the first reply wins and the other call
// is dropped (abandoned: its late reply is discarded by the loop) and counted. A transport
// failure (connection lost, no endpoint) of one of the two does not end the call while the other
// may still answer. Both calls share the caller's deadline, and the caller gets exactly one
// outcome within it.
//
// A budget caps backups at ratio of the calls that could have one, plus a burst: a servant that is
// slow everywhere is not sent twice its load.
type backup struct {
	delay time.Duration
	idem  map[string]bool // the functions that may be sent twice
	ratio float64

	tokens atomic.Int64 // budget, in thousandths of a backup

	sent    atomic.Uint64 // backups sent
	won     atomic.Uint64 // calls answered by their backup
	dropped atomic.Uint64 // calls whose other request's outcome was dropped
	denied  atomic.Uint64 // backups the budget refused
}

// The budget holds at most backupBurst backups plus ratio*backupWindow: what a window of
// backupWindow calls earns, so that backups wanted in bursts (a slow endpoint holds many calls at
// once) are not refused while the long-run share stays at ratio.
const (
	backupBurst  = 10
	backupWindow = 100
)

func newBackup(delay time.Duration, ratio float64, idempotent []string) *backup {
	if delay <= 0 || len(idempotent) == 0 {
		return nil
	}
	if ratio <= 0 {
		ratio = 0.1
	}
	b := &backup{delay: delay, ratio: ratio, idem: make(map[string]bool, len(idempotent))}
	for _, fn := range idempotent {
		b.idem[fn] = true
	}
	b.tokens.Store(b.capacity()) // a servant slow from its first calls gets its backups too
	return b
}

// deposit credits the budget for one eligible call.
func (b *backup) deposit() {
	if b.tokens.Load() < b.capacity() {
		b.tokens.Add(int64(b.ratio * 1000))
	}
}

// capacity is the most the budget holds, in thousandths of a backup.
func (b *backup) capacity() int64 { return int64(1000 * (backupBurst + b.ratio*backupWindow)) }

// take spends one backup from the budget, reporting false when there is none.
func (b *backup) take() bool {
	for {
		v := b.tokens.Load()
		if v < 1000 {
			b.denied.Add(1)
			return false
		}
		if b.tokens.CompareAndSwap(v, v-1000) {
			return true
		}
	}
}

// BackupStats counts a servant's backup requests.
type BackupStats struct {
	Sent    uint64 // backups sent
	Won     uint64 // calls answered by their backup first
	Dropped uint64 // outcomes dropped because the other request of the pair answered first
	Denied  uint64 // backups the budget refused
}

// BackupStats returns the servant's backup request counters (zero without backup-request).
func (s *ServantProxy) BackupStats() BackupStats {
	if s == nil || s.p == nil || s.p.backup == nil {
		return BackupStats{}
	}
	b := s.p.backup
	return BackupStats{Sent: b.sent.Load(), Won: b.won.Load(), Dropped: b.dropped.Load(), Denied: b.denied.Load()}
}

// await is wait for sync calls, with a backup request when c's function is idempotent and the
// servant has backup-request set. It returns the call whose outcome the caller gets (c or its
// backup): on a nil error the caller owns it and must Put it; every other call has been
// recycled or handed to the loop to recycle.
func (p *proxy) await(ctx context.Context, c *call.Call, t *netthread.Thread) (*call.Call, error) {
	b := p.backup
	if b == nil || !b.idem[c.Func] {
		return c, p.wait(ctx, c, t)
	}
	obj, ok := c.Dest.(*objectproxy.ObjectProxy)
	if !ok {
		return c, p.wait(ctx, c, t)
	}
	h := obj.NewHedge()
	c.Dest = h
	// The backup's frame is copied now: once c is submitted its frame belongs to the loop.
	c2 := call.Get()
	c2.Frame = append(c2.Frame[:0], c.Frame...)
	b.deposit()
	if err := t.Submit(c); err != nil {
		e := p.unsent(c.Func, resultOfUnsent(err), err)
		call.Put(c)
		call.Put(c2)
		return nil, e
	}
	timer := time.NewTimer(b.delay)
	defer timer.Stop()
	done := ctx.Done()
	select {
	case <-c.Done():
		call.Put(c2)
		return c, nil
	case <-done:
		call.Put(c2)
		return c, p.cancelWait(ctx, c)
	case <-timer.C:
	}
	now := call.Now()
	if c.Deadline-now < int64(time.Millisecond) || !b.take() || !p.prepareBackup(c, c2, t, h, now) {
		call.Put(c2)
		return c, p.waitSubmitted(ctx, c)
	}
	if err := t.Submit(c2); err != nil {
		call.Put(c2)
		return c, p.waitSubmitted(ctx, c)
	}
	b.sent.Add(1)
	return p.race(ctx, c, c2)
}

// prepareBackup makes c2 (holding a copy of c's frame) the backup of c: a request id of its own
// (the only difference on the wire), the same deadline, and Dest h.
func (p *proxy) prepareBackup(c, c2 *call.Call, t *netthread.Thread, h *objectproxy.Hedge, now int64) bool {
	var pkt codec.RequestPacket
	if err := codec.DecodeRequest(c2.Frame, &pkt); err != nil {
		return false
	}
	c2.ID = t.NextID()
	pkt.RequestID = c2.ID
	// pkt.Buffer is a view into c2.Frame: encode into a new buffer.
	c2.Frame = codec.AppendRequest(make([]byte, 0, len(c2.Frame)+8), &pkt)
	c2.Deadline, c2.Dest = c.Deadline, h
	c2.Servant, c2.Func, c2.Start = c.Servant, c.Func, now
	c2.Hashed, c2.Hash = c.Hashed, c.Hash
	return true
}

// race waits for the first useful outcome of c and its backup c2: a reply (a server error is a
// reply) from either, or the failure of both. The other call is dropped.
func (p *proxy) race(ctx context.Context, c, c2 *call.Call) (*call.Call, error) {
	b := p.backup
	done := ctx.Done()
	var failed *call.Call // the one that ended with a transport error, waiting for the other
	for {
		var got, other *call.Call
		select {
		case <-c.Done():
			got, other = c, c2
		case <-c2.Done():
			got, other = c2, c
		case <-done:
			if expiresWithCtx(ctx, c.Deadline) {
				done = nil // the loop ends both at their (shared) deadline
				continue
			}
			fn, start := c.Func, c.Start
			for _, x := range []*call.Call{c, c2} {
				if x == failed {
					call.Put(x)
					continue
				}
				if !x.Abandon() {
					<-x.Done()
					call.Put(x)
				}
			}
			return nil, cancelled(ctx, p.name, fn, start)
		}
		if got.Err != nil && failed == nil {
			failed = got // the other may still answer
			continue
		}
		if failed != nil {
			// Both ended; the first reply wins, else the primary's error.
			call.Put(failed)
			b.dropped.Add(1)
			if got == c2 && got.Err == nil {
				b.won.Add(1)
			}
			return got, nil
		}
		// got answered first: drop the other.
		if !other.Abandon() {
			<-other.Done()
			call.Put(other)
		}
		b.dropped.Add(1)
		if got == c2 {
			b.won.Add(1)
		}
		return got, nil
	}
}

// cancelWait ends a sync wait whose ctx ended first, as wait does: the call is abandoned (or,
// when its deadline is ctx's, left to the loop to end).
func (p *proxy) cancelWait(ctx context.Context, c *call.Call) error {
	if expiresWithCtx(ctx, c.Deadline) {
		// The call's deadline is the context's: the loop ends it within a check interval, with
		// the endpoint it waited on named in its error.
		<-c.Done()
		return nil
	}
	fn, start := c.Func, c.Start
	if c.Abandon() {
		// The loop recycles c when it meets it again.
		return cancelled(ctx, p.name, fn, start)
	}
	<-c.Done() // the reply won the race: take it
	return nil
}

// waitSubmitted is wait for a call already submitted: it returns when c has ended (nil: the
// caller owns c) or ctx has (c is abandoned, and the error says so).
func (p *proxy) waitSubmitted(ctx context.Context, c *call.Call) error {
	done := ctx.Done()
	if done == nil {
		<-c.Done()
		return nil
	}
	select {
	case <-c.Done():
		return nil
	case <-done:
		return p.cancelWait(ctx, c)
	}
}
