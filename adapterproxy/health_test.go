package adapterproxy

import (
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

func TestHealthRules(t *testing.T) {
	type event struct {
		at   int64 // ms
		kind string
	}
	policy := Health{
		MinTimeoutInvoke:     2,
		CheckTimeoutInterval: 100 * time.Millisecond,
		TimeoutRatio:         0.5,
		FrequentFailInvoke:   3,
		MinFrequentFailTime:  50 * time.Millisecond,
		TryInterval:          200 * time.Millisecond,
		MaxConnectFail:       2,
	}
	tests := []struct {
		name       string
		events     []event
		checkAt    int64 // ms
		wantActive bool
	}{
		{name: "healthy", events: []event{{0, "ok"}, {10, "ok"}, {20, "fail"}, {30, "ok"}}, checkAt: 40, wantActive: true},
		{name: "short streak does not deactivate", events: []event{{0, "fail"}, {10, "fail"}, {20, "fail"}}, checkAt: 30, wantActive: true},
		{name: "long streak deactivates", events: []event{{0, "fail"}, {30, "fail"}, {60, "fail"}}, checkAt: 70, wantActive: false},
		{name: "success breaks the streak", events: []event{{0, "fail"}, {30, "fail"}, {40, "ok"}, {60, "fail"}}, checkAt: 70, wantActive: true},
		{name: "ratio over a window deactivates at the next failed finish", events: []event{{0, "ok"}, {10, "fail"}, {20, "ok"}, {25, "fail"}, {120, "fail"}}, checkAt: 130, wantActive: false},
		{name: "a success after the window keeps it", events: []event{{0, "ok"}, {10, "fail"}, {20, "ok"}, {25, "fail"}, {120, "ok"}}, checkAt: 130, wantActive: true},
		{name: "low ratio keeps it", events: []event{{0, "ok"}, {1, "ok"}, {2, "ok"}, {3, "ok"}, {10, "fail"}, {20, "fail"}, {21, "ok"}, {22, "ok"}, {120, "ok"}}, checkAt: 130, wantActive: true},
		{name: "connect failures deactivate", events: []event{{0, "connfail"}, {10, "connfail"}}, checkAt: 20, wantActive: false},
		{name: "a connect in between resets", events: []event{{0, "connfail"}, {5, "connected"}, {10, "connfail"}}, checkAt: 20, wantActive: true},
		{name: "probe due after try interval", events: []event{{0, "connfail"}, {10, "connfail"}}, checkAt: 210, wantActive: true},
		{name: "probe success reactivates", events: []event{{0, "connfail"}, {10, "connfail"}, {210, "picked"}, {215, "ok"}}, checkAt: 216, wantActive: true},
		{name: "probe failure waits another interval", events: []event{{0, "connfail"}, {10, "connfail"}, {210, "picked"}, {215, "fail"}}, checkAt: 300, wantActive: false},
		// A stopping server finishing a call it had: the reply proves nothing of a server there later.
		{name: "a reply to a call sent before it went out keeps it out", events: []event{{0, "connfail"}, {10, "connfail"}, {50, "ok sent at 0"}}, checkAt: 60, wantActive: false},
		// Calls time out, pings are answered at once: the calls' failures stand.
		{name: "a ping on the connection whose calls failed keeps it out", events: []event{{0, "fail"}, {30, "fail"}, {60, "fail"}, {100, "ping, old connection"}}, checkAt: 110, wantActive: false},
		// A server that stalled: its probe went unanswered, then it answers again on the same
		// connection (a udp socket is never replaced).
		{name: "a ping answered after a probe went unanswered brings it back", events: []event{{0, "fail"}, {30, "fail"}, {60, "fail"}, {100, "probe lost"}, {400, "ping, old connection"}}, checkAt: 410, wantActive: true},
		{name: "a ping on a connection made since brings it back", events: []event{{0, "fail"}, {30, "fail"}, {60, "fail"}, {100, "ping, new connection"}}, checkAt: 110, wantActive: true},
		{name: "a user call sent since and answered brings it back", events: []event{{0, "fail"}, {30, "fail"}, {60, "fail"}, {260, "picked"}, {265, "ok sent at 260"}}, checkAt: 266, wantActive: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := health{policy: policy}
			for _, e := range tt.events {
				now := e.at * ms
				switch e.kind {
				case "ok": // a user call sent and answered now, on a connection opened at 0
					h.ok(now, now, false, 0)
				case "ok sent at 0":
					h.ok(now, 0, false, 0)
				case "ok sent at 260":
					h.ok(now, 260*ms, false, 0)
				case "ping, old connection":
					h.ok(now, now, true, 0)
				case "probe lost":
					h.probeLost()
				case "ping, new connection":
					h.ok(now, now, true, now)
				case "fail":
					h.fail(now)
				case "connfail":
					h.connectFailed(now)
				case "connected":
					h.connected()
				case "picked":
					h.picked(now)
				}
			}
			if got := h.available(tt.checkAt * ms); got != tt.wantActive {
				t.Fatalf("available at %d ms = %v, want %v (health %+v)", tt.checkAt, got, tt.wantActive, h)
			}
		})
	}
}
