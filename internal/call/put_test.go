package call

import (
	"errors"
	"reflect"
	"testing"
)

// TestPutResetsEveryField guards Put, which resets the fields one by one (it may not assign the
// whole struct, see Put): a field added to Call must be added to Put, and to this list.
func TestPutResetsEveryField(t *testing.T) {
	want := []string{"Oneway", "Hashed", "Hash", "Deadline", "Frame", "Dest", "Servant", "Func", "Start", "Finish", "Notify",
		"Rsp", "Callback", "RawCallback", "StopCancel", "OnEnd", "Handler", "ID", "Owner", "Rec", "next", "tprev", "tnext", "tslot",
		"SentAt", "Tries", "Hops", "Refused", "Tried", "Pair", "TriedIn", "Unsent", "QIdx", "Addr", "timerArmed", "KeepAddr", "nextGen", "Ret", "Desc", "Body", "Big", "bodyBuf", "Err", "RspCtx", "RspSt",
		"CtxDst", "StDst", "state", "done", "sentTo"}
	typ := reflect.TypeFor[Call]()
	var got []string
	for i := range typ.NumField() {
		got = append(got, typ.Field(i).Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Call's fields changed:\n got %v\nwant %v\nupdate Put and this test", got, want)
	}

	c := Get()
	gen := c.Gen()
	c.ID, c.Oneway, c.Hashed, c.Hash, c.Deadline = 7, true, true, 9, 11
	c.Frame = append(c.Frame, 1, 2, 3)
	c.Tries, c.Hops, c.Tried, c.TriedIn, c.Pair, c.Unsent, c.Ret, c.Desc, c.Err = 2, 1, 3, 4, new(Pair), true, -1, "x", errors.New("e")
	c.SentAt = 5
	c.Callback = func(error) {}
	c.Body = append(c.Body, 4)
	var m map[string]string
	c.CtxDst, c.StDst = &m, &m
	addr := "127.0.0.1:1"
	c.KeepAddr = true
	c.SetAddr(&addr)
	if c.SentTo() != addr {
		t.Fatalf("SentTo = %q with KeepAddr, want %q", c.SentTo(), addr)
	}
	Put(c)
	if c.ID != 0 || c.Oneway || c.Hashed || c.Hash != 0 || c.Deadline != 0 || len(c.Frame) != 0 ||
		c.SentAt != 0 || c.Tries != 0 || c.Hops != 0 || c.Tried != 0 || c.TriedIn != nil || c.Pair != nil || c.Unsent || c.Ret != 0 || c.Desc != "" || c.Err != nil ||
		c.Callback != nil || len(c.Body) != 0 || c.CtxDst != nil || c.StDst != nil || c.Addr != "" || c.SentTo() != "" || c.KeepAddr {
		t.Fatalf("Put left fields set: %+v", c)
	}
	if c.Gen() != gen+1 || c.Abandoned() {
		t.Fatalf("after Put: generation %d (want %d), abandoned %v", c.Gen(), gen+1, c.Abandoned())
	}
	if c.AbandonGen(gen) {
		t.Fatal("a stale generation abandoned the recycled call")
	}
}

// TestSentToOnlyWithKeepAddr: a call whose caller cannot give up (KeepAddr unset) has its
// address in Addr only; SetAddr does not publish it (the store SentTo would need).
func TestSentToOnlyWithKeepAddr(t *testing.T) {
	c := Get()
	addr := "127.0.0.1:2"
	c.SetAddr(&addr)
	if c.Addr != addr || c.SentTo() != "" {
		t.Fatalf("without KeepAddr: Addr %q, SentTo %q; want %q and \"\"", c.Addr, c.SentTo(), addr)
	}
	Put(c)
}
