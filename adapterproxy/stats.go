package adapterproxy

import (
	"errors"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/stats"
)

// RecordCall implements call.Recorder: it counts c, which ends with err (nil: a reply, whose
// return code is in c.Ret), under this endpoint, in the net thread's recorder. Called by
// call.Complete on the loop goroutine. The adapter's own pings are not counted, nor a one-way
// call that was sent (TarsCpp's AdapterProxy reports none to the stat service: it has no outcome;
// the endpoint's Sent counts it); a one-way call that failed is.
func (a *AdapterProxy) RecordCall(c *call.Call, err error) {
	if c.Func == "" || c.Oneway && err == nil {
		return
	}
	if a.rec == nil || a.rec.Forgotten() {
		a.rec = a.loop.Recorder().Endpoint(a.servant, a.addr)
	}
	res, code := Result(c, err)
	a.rec.Record(c.Func, res, code, time.Duration(a.loop.Now()-c.Start))
}

// Result classifies how c ended: err as Complete received it, or its reply's return code.
func Result(c *call.Call, err error) (stats.Result, int32) {
	switch {
	case err == nil:
		if c.Ret != 0 {
			return stats.ServerError, c.Ret
		}
		return stats.OK, 0
	case err == call.ErrAbandoned:
		return stats.Cancelled, 0
	case errors.Is(err, call.ErrTimeout):
		return stats.Timeout, 0
	case errors.Is(err, call.ErrQueueFull):
		return stats.QueueFull, 0
	case errors.Is(err, call.ErrOverload):
		return stats.Overload, 0
	case errors.Is(err, call.ErrNoEndpoint):
		return stats.NoEndpoint, 0
	case errors.Is(err, call.ErrClosed):
		return stats.Closed, 0
	case errors.Is(err, call.ErrRequestTooLarge), errors.Is(err, ErrDatagramTooLarge), errors.Is(err, errNoIDRoom):
		return stats.Refused, 0
	case errors.Is(err, call.ErrDecode): // a reply longer than max-packet-size (oversized)
		return stats.ServerError, codec.RetClientDecode
	}
	return stats.Connection, 0
}

// EndpointStats describes the endpoint's connection on this net thread, for a stats snapshot.
// Must be called on the loop goroutine.
func (a *AdapterProxy) EndpointStats(thread int) stats.Endpoint {
	st := stats.StateIdle
	switch a.state {
	case stateConnecting:
		st = stats.StateConnecting
	case stateConnected:
		st = stats.StateConnected
	case stateIdle:
		if a.retryAt > a.loop.Now() {
			st = stats.StateBackoff
		}
	}
	s := a.Stats()
	return stats.Endpoint{
		Thread:              thread,
		Servant:             a.servant,
		Endpoint:            a.addr,
		Set:                 a.ep.SetDivision,
		State:               st,
		Pending:             a.calls.len(),
		Active:              !a.health.inactive,
		WindowCalls:         a.health.windowCalls,
		WindowFailures:      a.health.windowFails,
		ConsecutiveFailures: a.health.streak,
		Sent:                s.Sent,
		Replies:             s.Replies,
		Late:                s.Late,
		Timeouts:            s.Timeouts,
		StopRefused:         s.StopRefused,
		ConnFails:           s.ConnFails,
		ConnLosses:          s.ConnLosses,
		Reconnects:          uint64(max(int(a.dialGen)-1, 0)),
		Deactivated:         s.Deactivated,
		BadDatagrams:        s.BadDatagrams,
		Pushes:              s.Pushes,
		PushesDropped:       s.PushesDropped,
	}
}
