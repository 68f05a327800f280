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
		done <- t.snapshot()
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
	for _, o := range t.objects() {
		for _, a := range o.Adapters() {
			e := a.EndpointStats(t.opts.Index)
			if e.State == stats.StateConnected {
				nt.Connections++
			}
			as := a.Stats()
			nt.Writes += as.Writes
			nt.BytesOut += as.BytesOut
			nt.BytesIn += as.BytesIn
			nt.LateReplies += as.Late
			s.Endpoints = append(s.Endpoints, e)
		}
	}
	s.Threads = []stats.NetThread{nt}
	return s
}
