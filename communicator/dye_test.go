package communicator_test

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestDyeingOnTheWire dyes calls by option and by context, sync, async and one-way, and checks
// what the server receives: iMessageType 0x04 and STATUS_DYED_KEY, the caller's own status map
// kept; an undyed call carries neither.
func TestDyeingOnTheWire(t *testing.T) {
	seen := make(chan *server.Current, 16)
	g := startGreeter(t, "a", serverOpt{seen: seen})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	next := func(what string) *server.Current {
		t.Helper()
		select {
		case cur := <-seen:
			return cur
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the server saw no call", what)
			return nil
		}
	}
	check := func(what string, cur *server.Current, key string, dyed bool) {
		t.Helper()
		got, ok := dye.FromRequest(cur.MessageType, cur.Status)
		if ok != dyed || got != key {
			t.Errorf("%s: server saw dyed=%v key=%q (message type %#x), want dyed=%v key=%q", what, ok, got, cur.MessageType, dyed, key)
		}
	}

	if _, err := sayHello(ctx, sp, "plain", 1); err != nil {
		t.Fatal(err)
	}
	check("undyed", next("undyed"), "", false)

	mine := map[string]string{"k": "v"}
	if _, err := sayHello(ctx, sp, "opt", 2, servantproxy.WithDyeing("user-7"), servantproxy.WithStatus(mine)); err != nil {
		t.Fatal(err)
	}
	cur := next("option")
	check("by option", cur, "user-7", true)
	if cur.Status["k"] != "v" {
		t.Errorf("the caller's status map was lost: %v", cur.Status)
	}
	if len(mine) != 1 {
		t.Errorf("the caller's status map was changed: %v", mine)
	}

	dctx := dye.WithKey(ctx, "user-8")
	if _, err := sayHello(dctx, sp, "ctx", 3); err != nil {
		t.Fatal(err)
	}
	check("by context, sync", next("ctx sync"), "user-8", true)

	done, err := asyncHello(t, dctx, sp, "async", 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitErr(done, 5*time.Second, "dyed async call"); err != nil {
		t.Fatal(err)
	}
	check("by context, async", next("ctx async"), "user-8", true)

	if err := onewayHello(dctx, sp, "oneway", 5); err != nil {
		t.Fatal(err)
	}
	check("by context, one-way", next("ctx one-way"), "user-8", true)
}
