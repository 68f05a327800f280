package adapterproxy

import "time"

// Health is the policy that decides when an endpoint is taken out of rotation and when it is
// tried again: TarsCpp's rules (CheckTimeoutInfo), handed down from conf.Health as plain values.
// A zero field disables its rule (or, for TryInterval, uses 5s).
type Health struct {
	MinTimeoutInvoke     int           // rule 1: least failures in a window
	CheckTimeoutInterval time.Duration // rule 1: the window
	TimeoutRatio         float64       // rule 1: least share of failures in the window
	FrequentFailInvoke   int           // rule 2: consecutive failures
	MinFrequentFailTime  time.Duration // rule 2: how long the streak must have lasted
	TryInterval          time.Duration // an inactive endpoint is probed this often
	MaxConnectFail       int           // rule 3: consecutive failed connects
}

// health tracks one AdapterProxy's calls against the Health policy. It lives on the loop
// goroutine: health is per (endpoint, net thread), as in TarsCpp, where every net thread keeps
// its own AdapterProxy statistics. That keeps the hot path free of shared state; the price is
// that each thread learns of a bad endpoint by itself, after at most a few calls.
type health struct {
	policy Health

	inactive bool
	nextTry  int64 // while inactive: the next probe may start at this time
	since    int64 // while inactive: when something last took it out (deactivate)
	lost     bool  // while inactive: a probe went unanswered since (probeLost)

	windowEnd   int64 // rule 1 window
	windowCalls int
	windowFails int
	streak      int   // rule 2: consecutive failures
	streakStart int64 // when the streak began
	connFails   int   // rule 3
	deactivated uint64
}

func (h *health) tryInterval() int64 {
	if h.policy.TryInterval <= 0 {
		return int64(5 * time.Second)
	}
	return int64(h.policy.TryInterval)
}

// available reports whether the balancer may choose this endpoint: it is active, or it is
// inactive and a probe is due.
func (h *health) available(now int64) bool {
	return !h.inactive || now >= h.nextTry
}

// picked records that a call was sent; an inactive endpoint's probe slot is used up.
func (h *health) picked(now int64) {
	if h.inactive && now >= h.nextTry {
		h.nextTry = now + h.tryInterval()
	}
}

// ok records a call that got a reply (any reply: a server error still proves the endpoint
// alive); sentAt is when the call was sent, ping whether it was the adapter's own tars_ping,
// opened when its connection opened. On an inactive endpoint, a reply makes it active again if
// it proves the endpoint serves now: a user call's sent since it went out (the one call a
// try-interval lets through), or a probe's ping on a connection made since (to a server that
// answers there again, a restarted one) or after a probe went unanswered (a server that stalled
// and answers again, over a udp socket, which is never replaced). A reply to a call sent before
// (a stopping server finishing what it had) proves nothing, nor does a ping on the connection
// whose calls failed while its pings are answered (a server whose calls time out may answer
// pings at once).
func (h *health) ok(now, sentAt int64, ping bool, opened int64) {
	if h.inactive {
		if sentAt < h.since || ping && opened < h.since && !h.lost {
			return
		}
		h.inactive = false
		h.windowCalls, h.windowFails, h.windowEnd = 0, 0, 0
		return
	}
	h.streak = 0
	h.account(now, false)
}

// probeLost records that a probe's ping went unanswered while the endpoint is inactive.
func (h *health) probeLost() {
	if h.inactive {
		h.lost = true
	}
}

// fail records a call that timed out or lost its connection and applies rules 1 and 2. A failed
// probe leaves an inactive endpoint inactive until the next probe.
func (h *health) fail(now int64) {
	if h.inactive {
		return
	}
	if h.streak == 0 {
		h.streakStart = now
	}
	h.streak++
	p := h.policy
	// As in TarsCpp, a streak of one failure needs no minimum duration.
	if p.FrequentFailInvoke > 0 && h.streak >= p.FrequentFailInvoke &&
		(p.FrequentFailInvoke == 1 || now-h.streakStart >= int64(p.MinFrequentFailTime)) {
		h.deactivate(now)
		return
	}
	h.account(now, true)
}

// account counts a finished call in the rule-1 window. As in TarsCpp (AdapterProxy's
// finishInvoke), the first call that finishes after the window ended gives its verdict, the call
// counted first, and only a failed call can take the endpoint out: a call that succeeds proves
// it alive, and the next window starts. The first window starts with the first call.
func (h *health) account(now int64, failed bool) {
	if h.windowEnd == 0 {
		h.windowEnd = now + h.window()
	}
	h.windowCalls++
	if failed {
		h.windowFails++
	}
	if now < h.windowEnd {
		return
	}
	if p := h.policy; failed && p.MinTimeoutInvoke > 0 && h.windowFails >= p.MinTimeoutInvoke &&
		float64(h.windowFails) >= p.TimeoutRatio*float64(h.windowCalls) {
		h.deactivate(now)
		return
	}
	h.windowEnd = now + h.window()
	h.windowCalls, h.windowFails = 0, 0
}

// window is the length of the rule-1 windows.
func (h *health) window() int64 {
	if w := int64(h.policy.CheckTimeoutInterval); w > 0 {
		return w
	}
	return int64(5 * time.Second)
}

// connectFailed records a failed dial and applies rule 3.
func (h *health) connectFailed(now int64) {
	h.connFails++
	if p := h.policy; p.MaxConnectFail > 0 && h.connFails >= p.MaxConnectFail {
		h.deactivate(now)
	}
}

// connected records a successful dial.
func (h *health) connected() { h.connFails = 0 }

func (h *health) deactivate(now int64) {
	if !h.inactive {
		h.deactivated++
	}
	h.inactive = true
	h.since, h.lost = now, false
	h.nextTry = now + h.tryInterval()
	h.windowCalls, h.windowFails, h.windowEnd = 0, 0, 0
	h.streak = 0
}
