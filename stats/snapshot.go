package stats

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Key names what a Call counts: a function of a servant, called on one endpoint ("host:port";
// "" for calls that ended before an endpoint was chosen).
type Key struct {
	Servant, Function, Endpoint string
}

func (k Key) compare(o Key) int {
	if c := cmp.Compare(k.Servant, o.Servant); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Function, o.Function); c != 0 {
		return c
	}
	return cmp.Compare(k.Endpoint, o.Endpoint)
}

// Call is the counters of one Key.
type Call struct {
	Key
	Counters
}

// NetThread is what one net thread counts about itself. The communicator fills it on the loop.
type NetThread struct {
	Index       int    `json:"index"`        // the net thread's number, from 0
	QueueDepth  int    `json:"queue_depth"`  // requests waiting in its submission queue when the snapshot was taken
	QueueCap    int    `json:"queue_cap"`    // the bound of that queue (queue-cap)
	Connections int    `json:"connections"`  // connections open
	Wakeups     uint64 `json:"wakeups"`      // times the loop was woken and drained calls from its queue (the deadline ticker's turns are not counted)
	HandBacks   uint64 `json:"hand_backs"`   // drains after a turn of replies that found calls their callers queued without a wakeup
	Batches     uint64 `json:"batches"`      // drains of the queue that found requests
	Requests    uint64 `json:"requests"`     // requests taken from the queue, or routed directly
	Direct      uint64 `json:"direct"`       // requests their caller routed itself, the thread being idle (no wakeup to route them); it wrote them too unless they had to wait (a connect, a backlog, a large frame)
	Writes      uint64 `json:"writes"`       // writes to connections
	BytesOut    uint64 `json:"bytes_out"`    // bytes written to connections
	BytesIn     uint64 `json:"bytes_in"`     // bytes read from connections
	LateReplies uint64 `json:"late_replies"` // replies for no pending call (timed out, abandoned, unknown id): dropped
}

// ConnState is the state of an endpoint's connection on one net thread.
type ConnState uint8

// The states of a connection.
const (
	StateIdle       ConnState = iota // never connected, or closed when idle: connects on the next call
	StateConnecting                  // a dial is running
	StateConnected                   // established
	StateBackoff                     // a dial failed or the connection was lost: waiting to reconnect
	StateClosed                      // closed for good (communicator closing, endpoint removed)
)

var connStateNames = [...]string{"idle", "connecting", "connected", "backoff", "closed"}

// String returns the state's name: "idle", "connecting", "connected", "backoff" or "closed".
func (s ConnState) String() string {
	if int(s) < len(connStateNames) {
		return connStateNames[s]
	}
	return "unknown"
}

// MarshalText writes the state's name, so that JSON shows "connected" rather than 2.
func (s ConnState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Endpoint is the state of one endpoint of a servant on one net thread (an AdapterProxy). The
// communicator fills it on the loop.
type Endpoint struct {
	Thread   int       `json:"thread"`        // the net thread
	Servant  string    `json:"servant"`       // the object name
	Endpoint string    `json:"endpoint"`      // host:port
	Set      string    `json:"set,omitempty"` // the endpoint's set division (-s), "" when it is in none
	State    ConnState `json:"state"`         // the connection's state
	Pending  int       `json:"pending"`       // two-way calls sent and waiting for their reply
	// Active is false while the health rules keep the endpoint out of rotation.
	Active bool `json:"active"`
	// WindowCalls and WindowFailures are the counts of the health check's current window.
	WindowCalls    int `json:"window_calls"`
	WindowFailures int `json:"window_failures"`
	// ConsecutiveFailures is the current run of failed calls.
	ConsecutiveFailures int `json:"consecutive_failures"`

	Sent        uint64 `json:"sent"`        // calls handed to this endpoint (one-way included)
	Replies     uint64 `json:"replies"`     // replies matched to a pending call
	Late        uint64 `json:"late"`        // replies for no pending call: dropped
	Timeouts    uint64 `json:"timeouts"`    // calls expired waiting for a reply
	ConnFails   uint64 `json:"conn_fails"`  // dials that failed
	ConnLosses  uint64 `json:"conn_losses"` // established connections that closed
	Reconnects  uint64 `json:"reconnects"`  // dials after the first
	Deactivated uint64 `json:"deactivated"` // times the health rules took the endpoint out of rotation
	// BadDatagrams counts the datagrams of a udp endpoint dropped for not being exactly one
	// decodable reply (truncated, trailing bytes, undecodable).
	BadDatagrams uint64 `json:"bad_datagrams"`
	// Pushes counts the packets the server pushed on the endpoint's connections (request id 0);
	// PushesDropped those of them nobody took (no push callback, or its queue was full), and
	// those read on a connection the client moved off, whose close the callback was told.
	Pushes        uint64 `json:"pushes"`
	PushesDropped uint64 `json:"pushes_dropped"`
	// StopRefused counts the calls the endpoint's server refused unrun as it was stopping; each
	// went to another endpoint once, when one was left.
	StopRefused uint64 `json:"stop_refused"`
}

// AddCounts adds the cumulative counters of e (Sent ... StopRefused) to d, not its gauges
// (State, Pending, Active, the health window): e is another connection of d's endpoint, or one
// that is gone.
func (d *Endpoint) AddCounts(e Endpoint) {
	d.Sent += e.Sent
	d.Replies += e.Replies
	d.Late += e.Late
	d.Timeouts += e.Timeouts
	d.StopRefused += e.StopRefused
	d.ConnFails += e.ConnFails
	d.ConnLosses += e.ConnLosses
	d.Reconnects += e.Reconnects
	d.Deactivated += e.Deactivated
	d.BadDatagrams += e.BadDatagrams
	d.Pushes += e.Pushes
	d.PushesDropped += e.PushesDropped
}

// Snapshot is the state of the counters at one moment: what Communicator.Stats returns, and what
// reporters read. It is a plain value that shares nothing with the recorders.
type Snapshot struct {
	Taken     time.Time   // when it was taken (the latest of the merged pieces)
	Calls     []Call      // sorted by Key
	Threads   []NetThread // sorted by Index
	Endpoints []Endpoint  // sorted by Servant, Endpoint, Thread
}

func sortCalls(cs []Call) {
	slices.SortFunc(cs, func(a, b Call) int { return a.Key.compare(b.Key) })
}

func sortEndpoints(es []Endpoint) {
	slices.SortFunc(es, func(a, b Endpoint) int {
		if c := cmp.Compare(a.Servant, b.Servant); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Endpoint, b.Endpoint); c != 0 {
			return c
		}
		return cmp.Compare(a.Thread, b.Thread)
	})
}

// Merge joins the pieces of several recorders (one per net thread, plus a Shared one) into one
// Snapshot: the Calls of equal keys are added up, Threads and Endpoints are put together. The
// pieces are not changed.
func Merge(parts ...Snapshot) Snapshot {
	var out Snapshot
	n := 0
	for _, p := range parts {
		n += len(p.Calls)
		if p.Taken.After(out.Taken) {
			out.Taken = p.Taken
		}
		out.Threads = append(out.Threads, p.Threads...)
		out.Endpoints = append(out.Endpoints, p.Endpoints...)
	}
	all := make([]Call, 0, n)
	for _, p := range parts {
		for i := range p.Calls {
			all = append(all, Call{Key: p.Calls[i].Key, Counters: p.Calls[i].Counters.clone()})
		}
	}
	sortCalls(all)
	for i := 0; i < len(all); i++ {
		if len(out.Calls) > 0 && out.Calls[len(out.Calls)-1].Key == all[i].Key {
			out.Calls[len(out.Calls)-1].Counters.add(&all[i].Counters)
			continue
		}
		out.Calls = append(out.Calls, all[i])
	}
	slices.SortStableFunc(out.Threads, func(a, b NetThread) int { return cmp.Compare(a.Index, b.Index) })
	sortEndpoints(out.Endpoints)
	return out
}

// AddPeriods adds the Period extremes of o's Calls to those of s with the same key (o's other
// keys are dropped). A stat reporter whose snapshot missed a net thread defers its report, but
// the threads that answered have ended their periods: it keeps that snapshot and adds its
// periods to the next one's, which then hold the whole interval again.
func (s *Snapshot) AddPeriods(o *Snapshot) {
	j := 0
	for i := range s.Calls {
		c := &s.Calls[i]
		for j < len(o.Calls) && o.Calls[j].Key.compare(c.Key) < 0 {
			j++
		}
		if j < len(o.Calls) && o.Calls[j].Key == c.Key {
			c.Period.Add(o.Calls[j].Period)
		}
	}
}

// Delta returns what happened between prev, an earlier Snapshot of the same communicator, and s:
// the Calls counters of s less those of prev, keeping only the keys that saw a call (Latency's
// Min and Max from Counters.Period when it holds the interval's samples, else as Histogram.Sub
// estimates them); the cumulative counters of Threads and Endpoints less prev's
// (matched by Index, and by Thread, Servant and Endpoint), and their gauges (QueueDepth, State,
// Pending, ...) as s has them. A counter lower than prev's (a restarted recorder) is taken whole.
func (s Snapshot) Delta(prev Snapshot) Snapshot {
	out := Snapshot{Taken: s.Taken}
	j := 0
	for i := range s.Calls {
		c := &s.Calls[i]
		for j < len(prev.Calls) && prev.Calls[j].Key.compare(c.Key) < 0 {
			j++
		}
		var d Counters
		if j < len(prev.Calls) && prev.Calls[j].Key == c.Key {
			d = c.Counters.sub(&prev.Calls[j].Counters)
		} else {
			d = c.Counters.clone()
		}
		if d.Calls() != 0 {
			out.Calls = append(out.Calls, Call{Key: c.Key, Counters: d})
		}
	}
	prevThreads := make(map[int]NetThread, len(prev.Threads))
	for _, t := range prev.Threads {
		prevThreads[t.Index] = t
	}
	for _, t := range s.Threads {
		if p, ok := prevThreads[t.Index]; ok {
			t.Wakeups = sub(t.Wakeups, p.Wakeups)
			t.HandBacks = sub(t.HandBacks, p.HandBacks)
			t.Batches = sub(t.Batches, p.Batches)
			t.Requests = sub(t.Requests, p.Requests)
			t.Direct = sub(t.Direct, p.Direct)
			t.Writes = sub(t.Writes, p.Writes)
			t.BytesOut = sub(t.BytesOut, p.BytesOut)
			t.BytesIn = sub(t.BytesIn, p.BytesIn)
			t.LateReplies = sub(t.LateReplies, p.LateReplies)
		}
		out.Threads = append(out.Threads, t)
	}
	type ek struct {
		thread            int
		servant, endpoint string
	}
	prevEps := make(map[ek]Endpoint, len(prev.Endpoints))
	for _, e := range prev.Endpoints {
		prevEps[ek{e.Thread, e.Servant, e.Endpoint}] = e
	}
	for _, e := range s.Endpoints {
		if p, ok := prevEps[ek{e.Thread, e.Servant, e.Endpoint}]; ok {
			e.Sent = sub(e.Sent, p.Sent)
			e.Replies = sub(e.Replies, p.Replies)
			e.Late = sub(e.Late, p.Late)
			e.Timeouts = sub(e.Timeouts, p.Timeouts)
			e.StopRefused = sub(e.StopRefused, p.StopRefused)
			e.ConnFails = sub(e.ConnFails, p.ConnFails)
			e.ConnLosses = sub(e.ConnLosses, p.ConnLosses)
			e.Reconnects = sub(e.Reconnects, p.Reconnects)
			e.Deactivated = sub(e.Deactivated, p.Deactivated)
			e.BadDatagrams = sub(e.BadDatagrams, p.BadDatagrams)
			e.Pushes = sub(e.Pushes, p.Pushes)
			e.PushesDropped = sub(e.PushesDropped, p.PushesDropped)
		}
		out.Endpoints = append(out.Endpoints, e)
	}
	return out
}

// sub returns a - b, or a when a < b (a counter that restarted).
func sub(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return a - b
}

// Total returns the counters of every Call of s added up.
func (s *Snapshot) Total() Counters {
	var t Counters
	for i := range s.Calls {
		t.add(&s.Calls[i].Counters)
	}
	return t
}

// UnmarshalText reads a name MarshalText wrote.
func (s *ConnState) UnmarshalText(b []byte) error {
	for i, n := range connStateNames {
		if n == string(b) {
			*s = ConnState(i)
			return nil
		}
	}
	return fmt.Errorf("stats: unknown connection state %q", b)
}
