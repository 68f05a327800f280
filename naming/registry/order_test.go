package registry_test

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
)

// TestReorderedAnswersAreOneList: a registry that lists the same endpoints in another order on
// each refresh (TarsCpp keeps them in sets, so a registry owes no order) gives a Manager one list,
// in TarsCpp's order, and the next list only when the endpoints change. Before, each reordered
// answer was a new list: every proxy of the object rebuilt its endpoint list on every net
// thread at each refresh, and the endpoint cache was rewritten.
func TestReorderedAnswersAreOneList(t *testing.T) {
	with := func(active []int32, inactive ...int32) answer {
		a := ok(active...)
		for _, p := range inactive {
			a.inactive = append(a.inactive, tcp(p))
		}
		if a.inactive == nil {
			a.inactive = []endpointf.EndpointF{}
		}
		return a
	}
	qs := startQueryServer(t,
		with([]int32{3, 1, 2}, 9, 8),
		with([]int32{2, 3, 1}, 8, 9),
		with([]int32{1, 2, 3}, 9, 8),
		with([]int32{2, 1}, 8, 9),
		with([]int32{1, 2}, 9, 8),
	)
	r := registry.New(queryProxy(t, qs.locator()), registry.Options{
		Log: zaptest.NewLogger(t), Refresh: 5 * time.Millisecond, FailRetry: hour, SlowFailRetry: hour, EmptyRetry: hour,
	})
	ev := newEvents()
	m := naming.NewManager(r, naming.Query{Object: "A.B.C"}, ev.push)
	m.Start()
	defer m.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(qs.queries()) < 8 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := len(qs.queries()); n < 8 {
		t.Fatalf("the registry was asked %d times in 10 s, want 8 (every 5 ms)", n)
	}
	want := []string{"push tcp:1,tcp:2,tcp:3 / tcp:8 tcp:9", "push tcp:1,tcp:2 / tcp:8 tcp:9"}
	got, _ := ev.waitFor(t, len(want))
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("the Manager pushed %q, want %q (a list once per change, in TarsCpp's order)", got, want)
	}
}
