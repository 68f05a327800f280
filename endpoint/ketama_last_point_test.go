package endpoint

import "testing"

// TestKetamaLookupLastPoint: a code equal to the ring's last point has no point strictly greater
// than it, so by the ring's rule (Ketama's doc: "any other code to the first point strictly
// greater than it", wrapping) it goes to the first point, as objectproxy's ketamaRing.Pick takes
// it. Before, Point returned Len() for it (slices.BinarySearch of code+1 past the end), and the
// exported Lookup panicked with an index out of range. (TarsCpp's getNodeName reads
// vHashList[high] past the end there.)
func TestKetamaLookupLastPoint(t *testing.T) {
	hosts := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	k := NewKetama(hosts, nil)
	last := k.points[len(k.points)-1]
	if last == ^uint32(0) {
		t.Skip("last point is MaxUint32: code+1 wraps")
	}
	var got int
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Lookup(%d), the ring's last point, panicked: %v; want the first point's node %s",
					last, r, hosts[k.owners[0]])
			}
		}()
		got = k.Lookup(last)
	}()
	if want := int(k.owners[0]); got != want {
		t.Fatalf("Lookup(%d), the ring's last point = %s, want the first point's node %s", last, hosts[got], hosts[want])
	}
	if p := k.Point(last); p < 0 || p >= k.Len() {
		t.Fatalf("Point(%d) = %d, outside the ring's %d points", last, p, k.Len())
	}
}
