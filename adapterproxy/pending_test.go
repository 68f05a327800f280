package adapterproxy

import (
	"math"
	"strconv"
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

// The slot array grows past half full, keeps every call findable by its id across the growth,
// never gives two pending calls ids in one slot (a long-pending call is skipped, not
// overwritten), and is made small again by trim once emptied after a burst (not before).
func TestCallTableGrowsAndShrinks(t *testing.T) {
	tab := newCallTable()
	long := &call.Call{Frame: frameFor(t, codec.RequestIDUnassigned)}
	if !tab.assign(long) {
		t.Fatal("assign refused")
	}
	tab.add(long)
	// Many short calls pass while the long one stays: its slot comes round again and again.
	for range 10 * minSlots {
		c := &call.Call{Frame: frameFor(t, codec.RequestIDUnassigned)}
		tab.assign(c)
		tab.add(c)
		if got := tab.take(c.ID); got != c {
			t.Fatalf("take(%d) = %p, want the call just added", c.ID, got)
		}
	}
	if got := tab.take(long.ID); got != long {
		t.Fatal("the long-pending call was lost or overwritten")
	}
	if len(tab.slots) != minSlots {
		t.Fatalf("%d slots for at most 2 calls pending, want %d", len(tab.slots), minSlots)
	}
	var burst []*call.Call
	for range 3 * shrinkAbove {
		c := &call.Call{Frame: frameFor(t, codec.RequestIDUnassigned)}
		tab.assign(c)
		tab.add(c)
		burst = append(burst, c)
	}
	if 2*tab.len() > len(tab.slots) {
		t.Fatalf("%d calls in %d slots: more than half full", tab.len(), len(tab.slots))
	}
	for _, c := range burst[1:] {
		if got := tab.take(c.ID); got != c {
			t.Fatalf("after growing, take(%d) = %p, want %p", c.ID, got, c)
		}
	}
	big := len(tab.slots)
	tab.trim()
	if len(tab.slots) != big {
		t.Fatal("trim shrank a table that still holds a call")
	}
	tab.remove(burst[0])
	if tab.len() != 0 || len(tab.slots) != big {
		t.Fatalf("emptied: %d calls, %d slots; want 0 and %d (until trim)", tab.len(), len(tab.slots), big)
	}
	tab.trim()
	if tab.len() != 0 || len(tab.slots) != minSlots {
		t.Fatalf("after the burst: %d calls, %d slots; want 0 and %d", tab.len(), len(tab.slots), minSlots)
	}
	if tab.take(burst[0].ID) != nil {
		t.Fatal("a reply for an ended call found a call")
	}
}

// BenchmarkCallTable is the table's cost per call at a steady number of calls pending: a reply
// taken, a new call given its id and added.
func BenchmarkCallTable(b *testing.B) {
	for _, pending := range []int{16, 512, 16384} {
		b.Run(strconv.Itoa(pending), func(b *testing.B) {
			tab := newCallTable()
			calls := make([]*call.Call, pending)
			for i := range calls {
				calls[i] = &call.Call{Frame: codec.AppendRequest(nil, &codec.RequestPacket{Version: codec.VersionTars, RequestID: codec.RequestIDUnassigned, ServantName: "A.B.C", FuncName: "f"})}
				if !tab.assign(calls[i]) {
					b.Fatal("assign refused")
				}
				tab.add(calls[i])
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c := calls[i]
				if tab.take(c.ID) != c {
					b.Fatal("lost a call")
				}
				if !tab.assign(c) {
					b.Fatal("assign refused")
				}
				tab.add(c)
				if i++; i == pending {
					i = 0
				}
			}
		})
	}
}
