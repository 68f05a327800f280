package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/stats"
)

// Helpers of the attribution tests (attribution of a call's outcome): what the caller, Stats and the interceptor
// each say about one call.

// attribEnd is what an interceptor saw at a call's End.
type attribEnd struct {
	Endpoint string
	Ret      int32
	Err      error
}

// attribIcpt records every call's CallInfo at End.
type attribIcpt struct {
	mu   sync.Mutex
	ends []attribEnd
}

func (a *attribIcpt) icpt() interceptor.Client {
	return func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
		info.OnEnd(func(ci *interceptor.CallInfo) {
			a.mu.Lock()
			a.ends = append(a.ends, attribEnd{ci.Endpoint, ci.Ret, ci.Err})
			a.mu.Unlock()
		})
		return next(ctx, info)
	}
}

func (a *attribIcpt) all() []attribEnd {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]attribEnd(nil), a.ends...)
}

// attribRows returns fn's rows of snap: endpoint -> result name -> count (only non-zero).
func attribRows(snap stats.Snapshot, fn string) map[string]map[string]uint64 {
	out := map[string]map[string]uint64{}
	for _, c := range snap.Calls {
		if c.Servant != servant || c.Function != fn {
			continue
		}
		for r, n := range c.Results {
			if n == 0 {
				continue
			}
			if out[c.Endpoint] == nil {
				out[c.Endpoint] = map[string]uint64{}
			}
			out[c.Endpoint][stats.Result(r).String()] += n
		}
	}
	return out
}

// attribTotal is the number of calls of fn counted in snap.
func attribTotal(snap stats.Snapshot, fn string) uint64 {
	var n uint64
	for _, rs := range attribRows(snap, fn) {
		for _, v := range rs {
			n += v
		}
	}
	return n
}

func attribRowsString(rows map[string]map[string]uint64) string {
	var eps []string
	for ep := range rows {
		eps = append(eps, ep)
	}
	sort.Strings(eps)
	var b strings.Builder
	for _, ep := range eps {
		fmt.Fprintf(&b, "[%q %v] ", ep, rows[ep])
	}
	return b.String()
}

// attribEndpointOf returns the endpoint the *CallError in err names ("" if none, or no CallError).
func attribEndpointOf(err error) string {
	var ce *communicator.CallError
	if errors.As(err, &ce) {
		return ce.Endpoint
	}
	return ""
}

// attribEndpointStats returns the entries of Stats().Endpoints of addr, summed over threads.
func attribEndpointStats(snap stats.Snapshot, addr string) (e stats.Endpoint, found bool) {
	for _, x := range snap.Endpoints {
		if x.Servant == servant && x.Endpoint == addr {
			e.AddCounts(x)
			found = true
		}
	}
	return e, found
}
