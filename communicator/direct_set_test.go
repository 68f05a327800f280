package communicator_test

import (
	"testing"

	"github.com/tarscomm/tarscomm/server"
)

// TestDirectProxyWithSetNotStamped: ProxyWithSet is documented as "TarsCpp's
// stringToProxy(obj, set)", and the cookbook says "A proxy string with @ is not routed by set
// (TarsCpp does the same)". In TarsCpp an ObjectProxy whose name holds '@' never becomes
// invoked-by-set (ObjectProxy.cpp, the constructor sets _isInvokeBySet only in the branch without
// '@', whether the set was explicit or the client's), so ServantProxy::invoke sends neither
// iMessageType 0x80 nor status STATUS_SETNAME_VALUE, and neither does tarscomm now. Before, it
// cleared the set of a direct proxy only when it was the client's, so a direct proxy from
// ProxyWithSet stamped the set on every call: a TarsCpp server with set enabled checks it
// (ServantHandle::checkValidSetInvoke) and rejects a call from another area of the same set name
// with -11 (TARSINVOKEBYINVALIDESET), where the TarsCpp client's call is accepted.
func TestDirectProxyWithSetNotStamped(t *testing.T) {
	seen := make(chan *server.Current, 4)
	a := startGreeter(t, "a", serverOpt{seen: seen})
	comm := newComm(t, nil)
	sp, err := comm.ProxyWithSet(servant+"@"+a.endpoint(), "app.sh.2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), sp, "s", 1); err != nil {
		t.Fatal(err)
	}
	cur := <-seen
	if cur.MessageType&0x80 != 0 || cur.Status["STATUS_SETNAME_VALUE"] != "" {
		t.Fatalf("a call of a direct proxy (\"Obj@tcp ...\") made with an explicit set arrived with message "+
			"type %#x and status %v; TarsCpp's stringToProxy(\"Obj@...\", set) sends neither 0x80 nor "+
			"STATUS_SETNAME_VALUE", cur.MessageType, cur.Status)
	}
}
