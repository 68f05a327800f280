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

// assign gives ids from 2 up (1 is the auth request's, codec.RequestIDAuth), writes each into
// the frame, and after the counter wraps skips 0, 1 and every id still in the table.
func TestCallTableIDs(t *testing.T) {
	tab := newCallTable()
	var calls []*call.Call
	for want := int32(2); want <= 4; want++ {
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
	// Call 3 ends; 2 and 4 stay pending across the wrap.
	if got := tab.take(3); got != calls[1] {
		t.Fatalf("take(3) = %p, want call 3", got)
	}
	if tab.take(3) != nil {
		t.Fatal("take(3) found the call a second time")
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
	if want := []int32{math.MaxInt32, 3, 5}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("ids across the wrap: %v, want %v (0 and 1 never; 2 and 4 still pending)", got, want)
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
// overwritten), and is made small again by trim after a burst: to shrinkAbove slots while a call
// is still pending (which stays findable).
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
	tab.trim()
	if tab.len() != 1 || len(tab.slots) != shrinkAbove {
		t.Fatalf("one call left after the burst, trimmed: %d calls, %d slots; want 1 and %d", tab.len(), len(tab.slots), shrinkAbove)
	}
	if !tab.has(burst[0].ID) {
		t.Fatal("the call left was lost by trim")
	}
	tab.remove(burst[0])
	if tab.len() != 0 || len(tab.slots) != shrinkAbove {
		t.Fatalf("emptied: %d calls, %d slots; want 0 and %d (until trim)", tab.len(), len(tab.slots), shrinkAbove)
	}
	tab.trim()
	if tab.len() != 0 || len(tab.slots) != shrinkAbove {
		t.Fatalf("after the burst: %d calls, %d slots; want 0 and %d (a table of shrinkAbove slots is kept)", tab.len(), len(tab.slots), shrinkAbove)
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

// A connection that once held a burst of 150,000 pending calls (a slow backend, an async
// fan-out) and then goes on with a few calls always in flight is made small again by its chores.
// Before, trim shrank only an empty table, so this one kept the burst's 2^19 slots (4 MiB per
// connection, per net thread) for as long as its load never paused (a review of what a
// long-lived Communicator keeps).
func TestCallTableShrinksUnderSteadyLoad(t *testing.T) {
	const (
		burst  = 150000
		steady = 8     // calls always in flight afterwards
		ticks  = 36000 // an hour of chore ticks (choreInterval = 100 ms)
	)
	frame := frameFor(t, codec.RequestIDUnassigned)
	newCall := func() *call.Call { return &call.Call{Frame: append([]byte(nil), frame...)} }
	tab := newCallTable()
	var pending []*call.Call
	for range burst {
		c := newCall()
		if !tab.assign(c) {
			t.Fatal("assign refused")
		}
		tab.add(c)
		pending = append(pending, c)
	}
	peak := len(tab.slots)
	// The burst's replies come; a steady few stay in flight.
	for _, c := range pending[steady:] {
		if tab.take(c.ID) != c {
			t.Fatal("lost a call")
		}
	}
	pending = pending[:steady]
	for range ticks {
		// Between two chore ticks, the calls in flight are answered and as many new ones sent.
		for i, c := range pending {
			if tab.take(c.ID) != c {
				t.Fatal("lost a call")
			}
			n := newCall()
			tab.assign(n)
			tab.add(n)
			pending[i] = n
		}
		tab.trim() // the connection's chore (keepalive.go: Tick)
	}
	t.Logf("peak %d slots for %d calls; after an hour with %d in flight: %d slots (%d KiB)",
		peak, burst, tab.len(), len(tab.slots), len(tab.slots)*8>>10)
	if len(tab.slots) > shrinkAbove {
		t.Fatalf("after an hour of chore ticks with %d calls pending, the table still has %d slots (%d KiB), the size the %d-call burst grew it to; want at most %d",
			tab.len(), len(tab.slots), len(tab.slots)*8>>10, burst, shrinkAbove)
	}
}

// A table rebuilt smaller keeps each call in a slot of its own: two ids distinct modulo the old
// size but not modulo shrinkAbove make the rebuild take the next size up. Emptied, a table above
// shrinkAbove goes back to minSlots.
func TestCallTableShrinkKeepsCollidingIDs(t *testing.T) {
	tab := callTable{slots: make([]*call.Call, 16*shrinkAbove)}
	a, b := &call.Call{ID: 5}, &call.Call{ID: 5 + shrinkAbove}
	tab.add(a)
	tab.add(b)
	tab.trim()
	if len(tab.slots) != 2*shrinkAbove {
		t.Fatalf("%d slots after trim, want %d (ids %d and %d share a slot of %d)", len(tab.slots), 2*shrinkAbove, a.ID, b.ID, shrinkAbove)
	}
	if tab.take(a.ID) != a || tab.take(b.ID) != b || tab.len() != 0 {
		t.Fatal("a call was lost by the rebuild")
	}
	tab.trim()
	if len(tab.slots) != minSlots {
		t.Fatalf("%d slots after trimming an empty table of %d, want %d", len(tab.slots), 2*shrinkAbove, minSlots)
	}
}

// Two long calls whose ids differ by half the table's size share a slot at every smaller size:
// no rebuild succeeds. trim then leaves the table for trimWait chores instead of allocating and
// dropping every smaller array at each one (4 MiB of garbage every 100 ms for a 2^19-slot table,
// found by a review of the change), and shrinks it once one of the calls ended.
func TestCallTableUnshrinkableWaits(t *testing.T) {
	const size = 1 << 19
	tab := callTable{slots: make([]*call.Call, size)}
	a, b := &call.Call{ID: 5}, &call.Call{ID: 5 + size/2}
	tab.add(a)
	tab.add(b)
	tab.trim()
	if len(tab.slots) != size {
		t.Fatalf("table shrank to %d: the two ids share a slot at every smaller size", len(tab.slots))
	}
	if n := testing.AllocsPerRun(trimWait/2, tab.trim); n != 0 {
		t.Fatalf("trim allocated %.1f times a chore on a table it cannot shrink, want none", n)
	}
	tab.remove(b)
	for range trimWait {
		tab.trim()
	}
	if len(tab.slots) != shrinkAbove || !tab.has(a.ID) {
		t.Fatalf("%d slots (call kept: %v) once the other call ended and trimWait chores passed, want %d", len(tab.slots), tab.has(a.ID), shrinkAbove)
	}
}
