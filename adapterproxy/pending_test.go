package adapterproxy

import (
	"math"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

func frameFor(t *testing.T, id int32) []byte {
	t.Helper()
	return codec.AppendRequest(nil, &codec.RequestPacket{Version: codec.VersionTars, RequestID: id, ServantName: "A.B.C", FuncName: "f"})
}

// assign gives ids from 1 up, writes each into the frame, and after the counter wraps skips 0
// and every id still in the table.
func TestCallTableIDs(t *testing.T) {
	tab := newCallTable()
	var calls []*call.Call
	for want := int32(1); want <= 3; want++ {
		c := &call.Call{Frame: frameFor(t, codec.RequestIDUnassigned)}
		if !tab.assign(c) || c.ID != want {
			t.Fatalf("assign: id %d, want %d", c.ID, want)
		}
		if got, _ := codec.RequestIDOf(c.Frame); got != want {
			t.Fatalf("frame carries id %d, want %d", got, want)
		}
		tab.add(c)
		calls = append(calls, c)
	}
	// Call 2 ends; 1 and 3 stay pending across the wrap.
	if got := tab.take(2); got != calls[1] {
		t.Fatalf("take(2) = %p, want call 2", got)
	}
	if tab.take(2) != nil {
		t.Fatal("take(2) found the call a second time")
	}
	tab.last = math.MaxInt32 - 1
	var got []int32
	for range 3 {
		c := &call.Call{Frame: frameFor(t, codec.RequestIDUnassigned)}
		if !tab.assign(c) {
			t.Fatal("assign refused")
		}
		got = append(got, c.ID)
		tab.add(c)
	}
	if want := []int32{math.MaxInt32, 2, 4}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("ids across the wrap: %v, want %v (0 never; 1 and 3 still pending)", got, want)
	}
	if n := tab.len(); n != 5 {
		t.Fatalf("len = %d, want 5", n)
	}
	all := tab.drain(nil)
	if len(all) != 5 || tab.len() != 0 {
		t.Fatalf("drain returned %d calls, %d left; want 5 and 0", len(all), tab.len())
	}
}

// A frame whose id was encoded narrow cannot take an id in place: assign refuses it and gives
// the call no id.
func TestCallTableAssignRefusesNarrowID(t *testing.T) {
	tab := newCallTable()
	c := &call.Call{Frame: frameFor(t, 7)}
	if tab.assign(c) {
		t.Fatal("assign took a frame with a 1-byte id")
	}
	if c.ID != 0 {
		t.Fatalf("refused call has id %d", c.ID)
	}
	if id, _ := codec.RequestIDOf(frameFor(t, 7)); id != 0 {
		t.Fatalf("RequestIDOf a narrow id = %d", id)
	}
}

// A table emptied after a burst is made again (its memory given back); a small one is kept.
func TestCallTableShrinks(t *testing.T) {
	tab := newCallTable()
	for i := int32(1); i <= shrinkAbove+1; i++ {
		tab.add(&call.Call{ID: i})
	}
	old := tab.m
	for i := int32(1); i <= shrinkAbove+1; i++ {
		tab.take(i)
	}
	if tab.len() != 0 || tab.peak != 0 {
		t.Fatalf("after the burst: len %d peak %d, want 0 0", tab.len(), tab.peak)
	}
	tab.add(&call.Call{ID: 1})
	if len(old) != 0 {
		t.Fatalf("the burst's map still holds %d calls", len(old))
	}
	small := tab.m
	tab.take(1)
	tab.add(&call.Call{ID: 2})
	if len(small) != 1 {
		t.Fatal("a small table was made again")
	}
}
