package communicator_test

import (
	"testing"
)

// TestRebindingAProxyHandleLeavesTheCachedProxy: Proxy returns a *ServantProxy, "a small handle: copies
// share the same proxy", and StringToProxy binds a *ServantProxy to a proxy string. A caller
// that re-points the handle it got from Proxy(a) at another string b (moving to new endpoints)
// changes its own handle. It must not change what the Communicator hands out for a: a later
// Proxy(a), or StringToProxy(a, &mine), should still call a's servant at a's endpoints. Before,
// Proxy handed out the pointer the Communicator kept, and the rebinding overwrote it: Proxy(a)
// called b.
func TestRebindingAProxyHandleLeavesTheCachedProxy(t *testing.T) {
	ga := startGreeter(t, "a", serverOpt{})
	gb := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, nil)
	a := servant + "@" + ga.endpoint()
	b := servant + "@" + gb.endpoint()

	mine, err := comm.Proxy(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := comm.StringToProxy(b, mine); err != nil { // the caller re-points its own handle
		t.Fatal(err)
	}

	again, err := comm.Proxy(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Target().String(); got != a {
		t.Errorf("Proxy(%q).Target() = %q after the caller re-pointed the handle Proxy had returned; want %q", a, got, a)
	}
	if from, err := sayHello(testCtx(t), again, "x", 1); err != nil || from != "a" {
		t.Errorf("a call through Proxy(a) was answered by server %q (err %v); want server a: rebinding the caller's handle re-pointed the Communicator's cached proxy", from, err)
	}
}
