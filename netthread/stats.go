package netthread

import (
	"context"
	"errors"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/stats"
)

// ErrStatsUnavailable is returned by Snapshot when the loop did not answer in time (or has
// stopped).
var ErrStatsUnavailable = errors.New("netthread: stats unavailable: the net thread did not answer")

// Snapshot returns this thread's counters: its calls by (servant, function, endpoint), its own
// counts and the state of every endpoint's connection on it. It runs on the loop, so it waits
// for the loop's current work, at most for timeout. Safe for concurrent use.
func (t *Thread) Snapshot(timeout time.Duration) (stats.Snapshot, error) {
	done := make(chan stats.Snapshot, 1)
	err := t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		entered := t.enter()
		s := t.snapshot()
		t.exit(entered)
		done <- s
		return nil
	}))
	if err != nil {
		return stats.Snapshot{}, ErrStatsUnavailable
	}
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case s := <-done:
		return s, nil
	case <-tm.C:
		return stats.Snapshot{}, ErrStatsUnavailable
	}
}

// ForgetStats drops, on the loop, the call counts of the (servant, endpoint) pairs drop reports
// (stats.Recorder.Forget; drop runs on the loop). It waits at most for timeout, and then returns
// ErrStatsUnavailable: the counts are dropped when the loop gets to it, before any Snapshot asked
// for later. Safe for concurrent use.
func (t *Thread) ForgetStats(drop func(servant, endpoint string) bool, timeout time.Duration) error {
	if t.rec == nil {
		return nil
	}
	done := make(chan struct{})
	err := t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		entered := t.enter() // the direct path records too
		t.rec.Forget(drop)
		t.exit(entered)
		close(done)
		return nil
	}))
	if err != nil {
		return ErrStatsUnavailable
	}
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case <-done:
		return nil
	case <-tm.C:
		return ErrStatsUnavailable
	}
}

// snapshot builds the Snapshot on the loop goroutine.
func (t *Thread) snapshot() stats.Snapshot {
	var s stats.Snapshot
	if t.rec != nil {
		s = t.rec.Snapshot()
	} else {
		s.Taken = time.Now()
	}
	nt := t.counts
	nt.Index = t.opts.Index
	nt.QueueDepth = int(t.queued.Load())
	nt.QueueCap = t.opts.QueueCap
	// One entry per (servant, endpoint): the connections of one endpoint (Options.Connections)
	// and those of the ObjectProxies of one servant made from different proxy strings (a #tag,
	// other endpoints) are summed, so that an endpoint's series is one.
	at := make(map[endpointKey]int)
	for _, o := range t.objects() {
		tr := o.Traffic()
		nt.Writes += tr.Writes
		nt.BytesOut += tr.BytesOut
		nt.BytesIn += tr.BytesIn
		nt.LateReplies += tr.Late
		for _, a := range o.Adapters() {
			e := a.EndpointStats(t.opts.Index)
			if e.State == stats.StateConnected {
				nt.Connections++
			}
			k := endpointKey{e.Servant, e.Endpoint}
			if i, ok := at[k]; ok {
				addConn(&s.Endpoints[i], e)
				continue
			}
			at[k] = len(s.Endpoints)
			s.Endpoints = append(s.Endpoints, e)
		}
	}
	s.Threads = []stats.NetThread{nt}
	return s
}

// endpointKey names an endpoint's entry in a thread's snapshot.
type endpointKey struct{ servant, endpoint string }

// stateRank orders connection states for addConn: an endpoint is as connected as its best
// connection.
var stateRank = [...]int{stats.StateBackoff: 0, stats.StateIdle: 1, stats.StateConnecting: 2, stats.StateConnected: 3}

// addConn adds e, the entry of another connection of d's endpoint, to d: counts are summed, the
// endpoint is active while one connection is, its state is its best connection's, and its run
// of failures is its longest.
func addConn(d *stats.Endpoint, e stats.Endpoint) {
	if int(e.State) < len(stateRank) && int(d.State) < len(stateRank) && stateRank[e.State] > stateRank[d.State] {
		d.State = e.State
	}
	d.Pending += e.Pending
	d.Active = d.Active || e.Active
	d.WindowCalls += e.WindowCalls
	d.WindowFailures += e.WindowFailures
	d.ConsecutiveFailures = max(d.ConsecutiveFailures, e.ConsecutiveFailures)
	d.Sent += e.Sent
	d.Replies += e.Replies
	d.Late += e.Late
	d.Timeouts += e.Timeouts
	d.ConnFails += e.ConnFails
	d.ConnLosses += e.ConnLosses
	d.Reconnects += e.Reconnects
	d.Deactivated += e.Deactivated
	d.BadDatagrams += e.BadDatagrams
	d.Pushes += e.Pushes
	d.PushesDropped += e.PushesDropped
}
