package netthread

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/stats"
)

// ErrStatsUnavailable is returned by Snapshot when the loop did not answer in time (or is
// stopping: Close has begun and not ended).
var ErrStatsUnavailable = errors.New("netthread: stats unavailable: the net thread did not answer")

// Snapshot returns this thread's counters: its calls by (servant, function, endpoint), its own
// counts and the state of every endpoint's connection on it. It runs on the loop, so it waits
// for the loop's current work, at most for timeout (and then for the snapshot itself, if the
// loop began it before the timeout). After Close it returns the final counters, at once. Safe
// for concurrent use.
func (t *Thread) Snapshot(timeout time.Duration) (stats.Snapshot, error) {
	return t.takeSnapshot(timeout, false)
}

// SnapshotEndingPeriod is Snapshot, and ends the recorder's period in the same turn of the loop
// (stats.Recorder.EndPeriod), for a stat reporter. When the loop does not answer within
// timeout, the period is not ended: the loop finds the snapshot abandoned when it gets to it,
// and the next snapshot's periods still hold the calls since the last one taken.
func (t *Thread) SnapshotEndingPeriod(timeout time.Duration) (stats.Snapshot, error) {
	return t.takeSnapshot(timeout, true)
}

// Claims of a snapshot taken on the loop: the loop's task and the waiter's timeout race for it.
const (
	snapWaiting = iota
	snapTaken   // the loop took it: the waiter gets it
	snapAbandon // the waiter gave up first: the loop leaves the counters alone
)

func (t *Thread) takeSnapshot(timeout time.Duration, endPeriod bool) (stats.Snapshot, error) {
	if t.stopped.Load() {
		// The loop is gone and Close has failed every call: the counters are final, and own
		// guards them against another snapshot taken so.
		t.own.Lock()
		defer t.own.Unlock()
		s := t.snapshot()
		if endPeriod && t.rec != nil {
			t.rec.EndPeriod()
		}
		return s, nil
	}
	done := make(chan stats.Snapshot, 1)
	var claim atomic.Int32
	err := t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		if !claim.CompareAndSwap(snapWaiting, snapTaken) {
			return nil
		}
		entered := t.enter()
		t.now = call.Now() // an idle loop's clock is its last turn's, up to a chore interval old
		s := t.snapshot()
		if endPeriod && t.rec != nil {
			t.rec.EndPeriod()
		}
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
		if claim.CompareAndSwap(snapWaiting, snapAbandon) {
			return stats.Snapshot{}, ErrStatsUnavailable
		}
		return <-done, nil // the loop is taking it: it sends at once
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
	forget := func() {
		t.rec.Forget(drop)
		for k := range t.past {
			if drop(k.servant, k.endpoint) {
				delete(t.past, k)
			}
		}
	}
	if t.stopped.Load() { // the loop is gone (takeSnapshot)
		t.own.Lock()
		defer t.own.Unlock()
		forget()
		return nil
	}
	done := make(chan struct{})
	err := t.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		entered := t.enter() // the direct path records too
		forget()
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
	var retiring []*adapterproxy.AdapterProxy
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
		retiring = append(retiring, o.RetiringAdapters()...)
	}
	// The counts of an endpoint's connections that are gone (keepPast), or still finishing their
	// calls after it left (retiring), go on in its entry while it is listed.
	var finishing map[endpointKey]bool // endpoints that left with connections still finishing calls
	for _, a := range retiring {
		e := a.EndpointStats(t.opts.Index)
		k := endpointKey{e.Servant, e.Endpoint}
		if i, ok := at[k]; ok {
			s.Endpoints[i].AddCounts(e)
		} else if len(t.past) > 0 {
			if finishing == nil {
				finishing = map[endpointKey]bool{}
			}
			finishing[k] = true
		}
	}
	for k, p := range t.past {
		switch i, ok := at[k]; {
		case ok:
			s.Endpoints[i].AddCounts(p.Endpoint)
			p.seen = t.now // listed: its retention counts from when it leaves
			t.past[k] = p
		case !finishing[k] && t.now-p.seen >= int64(t.pastRetention()) && !t.rec.Has(k.servant, k.endpoint):
			delete(t.past, k) // no call counts to be forgotten with (keepPast)
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
	d.AddCounts(e)
}

// keepPast records the counters of a, an AdapterProxy of an endpoint that left its servant's
// list, forgotten once its calls were done (objectproxy.Options.Gone): when the endpoint is
// listed again, its entry's counters go on from there instead of starting again from 0 (a
// Prometheus counter must not go back while its series lives). They are kept as long as the
// endpoint's call counts are, and dropped with them (ForgetStats). An endpoint no call was
// counted for (each was retried on another endpoint, or only pings went to it) has no call
// counts to be dropped with: its counters are kept for Options.StatsRetention after it was last
// seen (listed, by a snapshot, or letting go of a connection), and dropped by the first snapshot
// after that which finds it unlisted with no connection still finishing calls (each net thread
// drops its own entry, a series of its own). Snapshots come at least every half retention (the
// Communicator's sweep). With stats off nothing is kept. Runs on the loop goroutine.
func (t *Thread) keepPast(a *adapterproxy.AdapterProxy) {
	if t.rec == nil {
		return
	}
	e := a.EndpointStats(t.opts.Index)
	k := endpointKey{e.Servant, e.Endpoint}
	if t.past == nil {
		t.past = make(map[endpointKey]pastCounts)
	}
	p := t.past[k]
	p.AddCounts(e)
	p.seen = t.now
	t.past[k] = p
}

// pastCounts is what keepPast keeps of an endpoint that left: its connections' counters, and
// when it was last seen listed or letting go of a connection (the loop's clock).
type pastCounts struct {
	stats.Endpoint
	seen int64
}

// defaultPastRetention is Options.StatsRetention's default.
const defaultPastRetention = 10 * time.Minute

func (t *Thread) pastRetention() time.Duration {
	if t.opts.StatsRetention > 0 {
		return t.opts.StatsRetention
	}
	return defaultPastRetention
}
