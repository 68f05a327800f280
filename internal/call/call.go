package call

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// Router is the destination a net thread hands a Call to: the ObjectProxy of the call's servant
// on that thread. Its methods are called on the loop goroutine.
type Router interface {
	// Route sends c to one of the servant's endpoints.
	Route(c *Call)
	// Retry is called for a call that failed with err before any byte of it was written: it
	// sends c to another endpoint if the servant's retry policy and c's deadline allow, and
	// completes it with err otherwise. It is also called for a call a stopping server refused
	// without running it (c.Refused == 1): that one moves to another endpoint once whatever the
	// policy, as it never ran.
	Retry(c *Call, err error)
}

// Recorder counts finished calls: Complete hands it every call it ends (a success, a server
// error in Ret, or err), on the loop goroutine that owns the recorder, before the waiter can see
// the call. The net thread sets one on every call it routes, and the endpoint's AdapterProxy
// replaces it with its own.
type Recorder interface {
	RecordCall(c *Call, err error)
}

// Owner is whoever holds a Call in its pending table on the loop (an AdapterProxy). Expire is
// called on the loop goroutine by the Wheel when the call's deadline has passed: the owner must
// forget the call and complete it with ErrTimeout.
type Owner interface {
	Expire(c *Call)
}

// States of a Call, in the low two bits of its state word; the bits above count the Call's
// uses (its generation), so that a stale reference to a recycled Call cannot abandon its next
// use. A Call leaves statePending exactly once per generation: Complete moves the word to the
// next generation (a holder of this one reads it as no longer pending, and Put has nothing left
// to write), AbandonGen and DropGen to an ended state of this one (Put moves it on).
const (
	statePending uint64 = iota
	stateAbandoned
	stateDropped        // abandoned by the framework: the other call of a backup pair won (Drop)
	stateMask    uint64 = 3
)

// Call is one request in flight. Get one with Get, give it back with Put.
type Call struct {
	// Set by the caller before it submits the call; read-only afterwards, but for the request
	// id inside Frame.
	Oneway   bool
	Hashed   bool
	Hash     uint64
	Deadline int64 // monotonic nanoseconds (see Now); 0 means none
	// Frame is the whole encoded request frame, encoded with codec.RequestIDUnassigned as its
	// request id: the AdapterProxy that sends the call writes the real id over it, in place.
	// A large frame is given back once sent (FrameSent), and Frame is nil from then on.
	Frame   []byte
	Dest    Router // the ObjectProxy that routes this call on its net thread
	Servant string // the servant and function called, for errors
	Func    string
	Start   int64 // when the call began (Now clock), for errors

	// Finish, when set, makes this an asynchronous call: Complete hands the call to Notify (an
	// asyncproc pool), whose worker runs Finish(c). Finish owns c from then on and must Put it.
	Finish func(c *Call)
	Notify func(c *Call)
	// Rsp and Callback are the asynchronous call's reply (a proto.Message, or a
	// servantproxy.TarsReply) and user callback, kept here so that an async call needs no
	// closure of its own. RawCallback is used by raw-body calls.
	Rsp         any
	Callback    func(error)
	RawCallback func([]byte, error)
	// StopCancel, when set, detaches the context watcher of an async call (context.AfterFunc's
	// stop); the finisher calls it.
	StopCancel func() bool
	// OnEnd, when set, is told how an async call ended, on the async worker before the user's
	// callback (the interceptors' End).
	OnEnd func(c *Call, err error)
	// Handler is what a carrier of a connection event (a push, an open, a close) brings its
	// Finish to run: the callback that accepted the event (servantproxy's push sink).
	Handler any

	// Owned by the loop goroutine while the call is pending.
	ID      int32 // the request id its AdapterProxy gave it (adapterproxy/pending.go); 0 before
	Owner   Owner
	Rec     Recorder // counts the call when it ends; nil: not counted
	next    *Call    // Stack link
	tprev   *Call    // Wheel links
	tnext   *Call
	tslot   int32
	SentAt  int64  // when its AdapterProxy took it (Now clock): its endpoint's latency counts from here
	Tries   int8   // endpoints tried so far
	Hops    int8   // moves to another connection of the same endpoint (ObjectProxy.Retry)
	Refused int8   // 1: refused unrun by a stopping server, to move elsewhere (Router.Retry); 2: moved (once only)
	Tried   uint64 // bit i%64: an endpoint i of list TriedIn was tried (objectproxy's markTried)
	// Pair, for the two calls of a backup request, makes them count as one (pair.go); nil for
	// any other call.
	Pair *Pair
	// TriedIn is the endpoint list Tried's indices refer to (an objectproxy *List, opaque here):
	// an update renumbers the endpoints, and objectproxy carries Tried over to the new list.
	TriedIn any
	Unsent  bool  // queued on a connection but not written yet
	QIdx    int32 // while Unsent: the call's index in its owner's send queue
	// Addr is the endpoint the call was last sent to ("" before one was chosen), for errors.
	// SetAddr writes it; the caller reads it after the call ended, or SentTo while it is pending.
	Addr       string
	timerArmed bool
	// KeepAddr, set by the submitter before it submits the call, says that its caller may give
	// up while the call is pending (its context can end) and read SentTo: only then does SetAddr
	// publish the address, a full-barrier store the other calls do without.
	KeepAddr bool
	nextGen  bool // Complete moved the state word to the next generation already

	// Results, written by the loop before Complete and read by the finisher after it.
	Ret  int32
	Desc string
	Body []byte // the reply body: a view into Big, or into the call's own reused buffer
	// Big, when set, is the whole reply frame, assembled from many reads in a bufpool buffer
	// that the call now owns; Body is a view into it. Put gives it back to the pool unless
	// TakeBody handed it to the user.
	Big     []byte
	bodyBuf []byte // the call's own body buffer, reused across pool uses
	Err     error
	RspCtx  map[string]string
	RspSt   map[string]string
	// CtxDst and StDst, when set, are where an async call's finisher stores RspCtx and RspSt
	// before the callback runs (WithResponseContext, WithResponseStatus).
	CtxDst, StDst *map[string]string

	state  atomic.Uint64          // generation<<2 | state
	done   chan struct{}          // capacity 1: signalled once per use by Complete for sync calls
	sentTo atomic.Pointer[string] // Addr, for a caller giving up while the call is pending (SentTo); KeepAddr
}

// SetAddr records that the call is being sent to addr, which must not change afterwards (an
// AdapterProxy's own address), and publishes it for SentTo if the call's KeepAddr is set. Must
// be called on the loop goroutine.
func (c *Call) SetAddr(addr *string) {
	c.Addr = *addr
	if c.KeepAddr {
		c.sentTo.Store(addr)
	}
}

// Unrun reports whether c, ended, was answered with a refusal: RetOverload (-9), which a server
// answers without running the call (its queue full, or it is stopping). Of a backup pair, such
// a reply is no outcome while the other half may still answer (Pair, servantproxy's race).
func (c *Call) Unrun() bool { return c.Err == nil && c.Ret == codec.RetOverload }

// SentTo returns the endpoint a pending call was last sent to, "" before one was chosen: what a
// caller giving up on the call (its context ended) names in its error. Only a call submitted
// with KeepAddr set has one (always "" otherwise). It may be read from any goroutine; read
// before AbandonGen, while the caller's use of the call is still its own.
func (c *Call) SentTo() string {
	if a := c.sentTo.Load(); a != nil {
		return *a
	}
	return ""
}

var pool = sync.Pool{New: func() any {
	c := &Call{done: make(chan struct{}, 1)}
	c.state.Store(1 << 2) // generation 1: a zero state word is never a live call
	return c
}}

// Get returns a Call ready to be filled: all fields zero but its reusable buffers.
func Get() *Call {
	return pool.Get().(*Call)
}

// maxKeep is the largest buffer a pooled Call keeps; bigger ones are dropped so that one large
// call does not pin memory in the pool forever.
const maxKeep = 64 << 10

// SetBody stores a copy of b, a view into a read buffer, as the reply body.
func (c *Call) SetBody(b []byte) {
	c.bodyBuf = append(c.bodyBuf[:0], b...)
	c.Body = c.bodyBuf
}

// SetBigBody stores body, a view into frame, as the reply body; the call owns frame (a bufpool
// buffer) from now on.
func (c *Call) SetBigBody(frame, body []byte) {
	c.Big, c.Body = frame, body
}

// FrameSent is called on the loop once c's whole frame has left it (written to the socket, or
// copied to be written): nothing reads the frame again, as a call is only ever retried before
// any byte of it was written. A frame larger than a pooled Call keeps goes back to bufpool now
// rather than at Put, so that a large request holds its buffer for the time of its write, not of
// its round trip: 64 calls of 8 MiB waiting for their replies then hold 512 MiB less, and the
// next calls' frames and replies reuse those buffers instead of faulting in fresh memory.
func (c *Call) FrameSent() {
	if cap(c.Frame) > maxKeep {
		bufpool.Put(c.Frame)
		c.Frame = nil
	}
}

// TakeBody hands the reply body to the caller, who owns it from then on: no copy is made, and
// the call forgets the buffer. An empty body is returned as a non-nil empty slice of no capacity:
// the call keeps its buffer then, which the caller must not reach by appending.
func (c *Call) TakeBody() []byte {
	b := c.Body
	if c.Big != nil {
		c.Big = nil
	} else if len(b) > 0 {
		c.bodyBuf = nil
	} else {
		b = nil
	}
	c.Body = nil
	if b == nil {
		b = []byte{}
	}
	return b
}

// Put resets c and returns it to the pool. Only the final owner of a finished or abandoned call
// may call it, once.
//
// The state word is never written non-atomically: a context watcher of an earlier use may still
// read it (AbandonGen), and must see either the old generation or the next one. A call that
// Complete delivered is in the next generation already; Put writes the word (a full-barrier
// store) only for the others: abandoned, dropped, or never submitted.
func Put(c *Call) {
	frame, body := c.Frame[:0], c.bodyBuf[:0]
	if cap(frame) > maxKeep {
		bufpool.Put(frame)
		frame = nil
	}
	if cap(body) > maxKeep {
		body = nil
	}
	if c.Big != nil {
		bufpool.Put(c.Big)
		c.Big = nil
	}
	c.ID, c.Oneway, c.Hashed, c.Hash, c.Deadline = 0, false, false, 0, 0
	c.Frame, c.Dest, c.Servant, c.Func, c.Start = frame, nil, "", "", 0
	c.Finish, c.Notify, c.Rsp, c.Callback, c.RawCallback, c.StopCancel, c.OnEnd = nil, nil, nil, nil, nil, nil, nil
	c.Owner, c.Rec, c.next, c.tprev, c.tnext, c.tslot, c.SentAt = nil, nil, nil, nil, nil, 0, 0
	c.Tries, c.Hops, c.Refused, c.Tried, c.TriedIn, c.Pair, c.Unsent, c.QIdx, c.Addr, c.timerArmed = 0, 0, 0, 0, nil, nil, false, 0, "", false
	c.Ret, c.Desc, c.Body, c.bodyBuf, c.Err, c.RspCtx, c.RspSt = 0, "", nil, body, nil, nil, nil
	c.CtxDst, c.StDst, c.Handler = nil, nil, nil
	if c.KeepAddr {
		c.KeepAddr = false
		if c.sentTo.Load() != nil {
			c.sentTo.Store(nil)
		}
	}
	if c.nextGen {
		c.nextGen = false
	} else {
		c.state.Store((c.state.Load()>>2 + 1) << 2)
	}
	pool.Put(c)
}

// Complete ends a pending call with err (nil when a reply was stored in Ret/Body) and wakes its
// waiter: the sync caller, or the async pool through Notify. It must be called on the loop
// goroutine after the call was removed from every loop structure. If the caller already
// abandoned the call, Complete recycles it instead. Complete reports whether the call was
// delivered to a waiter.
func (c *Call) Complete(err error) bool {
	c.Err = err
	s := c.state.Load()
	if s&stateMask != statePending || !c.state.CompareAndSwap(s, (s>>2+1)<<2) {
		if c.Rec != nil {
			// A dropped call is no call of its own; of a backup pair, one half counts (Pair).
			// The word is read again: the CAS may have lost to AbandonGen or DropGen.
			counts := c.state.Load()&stateMask != stateDropped
			if c.Pair != nil {
				counts = c.Pair.counts(c, errAbandoned) && counts
			}
			if counts {
				c.Rec.RecordCall(c, errAbandoned)
			}
		}
		Put(c)
		return false
	}
	c.nextGen = true
	if c.Rec != nil && (c.Pair == nil || c.Pair.counts(c, err)) {
		c.Rec.RecordCall(c, err)
	}
	if c.Notify != nil {
		c.Notify(c)
	} else {
		c.done <- struct{}{}
	}
	return true
}

// Gen returns the call's generation, which names this use of the Call to AbandonGen and DropGen.
// Read it before submitting the call: once the call is submitted, Complete moves the word to the
// next use's generation, and a generation read after that would name the next use.
func (c *Call) Gen() uint64 { return c.state.Load() >> 2 }

// AbandonGen is called by a caller that stops waiting for the call (its context ended), with the
// generation it read before submitting it (Gen): it abandons the call only if it is still the use
// numbered gen and still pending, and reports whether it did. True: the loop now owns the call
// and will recycle it. False: Complete ran or is about to signal; a sync caller must still wait.
func (c *Call) AbandonGen(gen uint64) bool {
	s := c.state.Load()
	return s>>2 == gen && s&stateMask == statePending && c.state.CompareAndSwap(s, s|stateAbandoned)
}

// DropGen is AbandonGen for the framework giving up a call whose result is not wanted any more
// (the other call of a backup pair answered first): the loop recycles it as an abandoned one,
// but does not count it (a Recorder is not told): it is half of a call counted by its other half.
func (c *Call) DropGen(gen uint64) bool {
	s := c.state.Load()
	return s>>2 == gen && s&stateMask == statePending && c.state.CompareAndSwap(s, s|stateDropped)
}

// Delayed is told that c's frame leaves now, later than it was encoded (at Start): after a
// retry, a wait for its connection, for the servant's first endpoint list or in the connection's
// send queue. Its iTimeout is made the time left (codec.SetRequestTimeout), so that the server's
// deadline stays the caller's. A delay under a millisecond changes nothing (the field counts milliseconds, rounded
// up). Must be called by the call's owner (the loop, while it is pending).
func (c *Call) Delayed(now int64) {
	if c.Deadline != 0 && now-c.Start >= int64(time.Millisecond) {
		codec.SetRequestTimeout(c.Frame, codec.RequestTimeout(time.Duration(c.Deadline-now)))
	}
}

// Abandoned reports whether the caller (or the framework, DropGen) gave up on the call. The
// loop uses it to skip work for calls nobody waits for.
func (c *Call) Abandoned() bool { return c.state.Load()&stateMask >= stateAbandoned }

// Done returns the channel a sync caller waits on; it receives once, after Complete.
func (c *Call) Done() <-chan struct{} { return c.done }

var epoch = time.Now()

// Now returns monotonic nanoseconds since process start; call deadlines are in this clock.
func Now() int64 { return int64(time.Since(epoch)) }
