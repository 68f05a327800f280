package objectproxy_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/adapterproxy"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestWindowVerdictNotOnSuccess: the timeout-ratio rule (rule 1) with
// min-timeout-invoke = 1, timeout-ratio = 0.5, a 300 ms check window, the streak rule off. An
// endpoint B had one timeout in a window; the window ends; B's next call is answered at once.
// TarsCpp's AdapterProxy::finishInvoke judges a window only on a failed call (if (bFail &&
// _timeoutInvoke >= minTimeoutInvoke && ...) setInactive(); else it clears the counts): a
// success never takes an endpoint out. Before, the first call to finish after the window ended
// gave the verdict whatever its outcome, so B's successful reply took B out of rotation, and the
// next call for B's hash code went to the other endpoint although B had just answered.
func TestWindowVerdictNotOnSuccess(t *testing.T) {
	answer := func(s *rawPeer, c net.Conn, req *codec.RequestPacket) {
		if req.FuncName != "hang" {
			s.reply(c, req, 0)
		}
	}
	a, b := startRawPeer(t, answer), startRawPeer(t, answer)
	eps := []endpoint.Endpoint{a.ep, b.ep}
	th := rawThread(t, netthread.Options{Health: adapterproxy.Health{
		MinTimeoutInvoke: 1, CheckTimeoutInterval: 300 * time.Millisecond, TimeoutRatio: 0.5,
		TryInterval: 5 * time.Second,
	}})
	o := rawObj(t, th, eps, objectproxy.Options{})
	code := codeFor(eps, b.ep)
	// Warm B up (its connection, and the window's start).
	if addr, _, err := wait(t, submit(t, th, o, "f", true, code, 5*time.Second)); err != nil || addr != b.addr {
		t.Fatalf("warm-up call for B's code: addr %s err %v, want %s", addr, err, b.addr)
	}
	// One timeout on B in the window: 1 of 2 calls, at the ratio.
	if _, _, err := wait(t, submit(t, th, o, "hang", true, code, 100*time.Millisecond)); !errors.Is(err, call.ErrTimeout) {
		t.Fatalf("hang call: %v, want a timeout", err)
	}
	time.Sleep(400 * time.Millisecond) // the window ends
	// B answers this one: a success.
	if addr, ret, err := wait(t, submit(t, th, o, "f", true, code, 5*time.Second)); err != nil || ret != 0 || addr != b.addr {
		t.Fatalf("call after the window: addr %s ret %d err %v, want a reply from B %s", addr, ret, err, b.addr)
	}
	// B just answered: its code's next call still goes to B.
	addr, _, err := wait(t, submit(t, th, o, "f", true, code, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if addr != b.addr {
		t.Fatalf("the call right after B answered successfully went to %s, not B (%s): B's successful reply, the first call to finish after a window with 1 timeout in 2 calls, took B out of rotation; "+
			"TarsCpp judges a window only on a failed call (bFail && timeouts >= min-timeout-invoke && ratio), a success never deactivates", addr, b.addr)
	}
}
