package devregistry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/devregistry"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/protocol/queryf"
)

// TestHugeList: an object with more endpoints than one reply frame may hold (400000: a
// 14 MB reply; the max-packet-size of both sides is 10 MiB) is answered with an error reply
// for that query (RetServerEncode, as the server does for a udp reply that does not fit a
// datagram and for a push above max-packet-size), not with a frame the client must take for a
// broken stream: that closes the registry connection, and every other query on it (every
// servant's refresh shares it) fails with the huge one, as happened before.
func TestHugeList(t *testing.T) {
	r := startRegistry(t, devregistry.Options{})
	const n = 400000
	for i := range n {
		ep := endpoint.Endpoint{Proto: endpoint.TCP, Host: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Port: 1 + i%60000, Weight: -1, SetDivision: "app.sz.1"}
		r.Register("App.S.HugeObj", ep, 0)
	}
	r.Register("App.S.SmallObj", endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: 9000, Weight: -1}, 0)
	comm := client(t, r, "sync-invoke-timeout = \"2m\"") // a liveness bound: the huge reply is slow to build under -race
	q := new(queryf.QueryFProxy)
	if err := comm.StringToProxy(r.Locator(), q); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a liveness bound (46 s seen beside two CPU hogs under -race)
	defer cancel()
	if _, _, _, err := q.FindObjectByIdInSameGroup(ctx, "App.S.SmallObj"); err != nil {
		t.Fatalf("small query: %v", err) // the connection is up
	}

	// Small queries run back to back beside the huge one, to see what happens to them.
	var small, smallFailed atomic.Int64
	var firstSmallErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _, _, err := q.FindObjectByIdInSameGroup(ctx, "App.S.SmallObj")
			small.Add(1)
			if err != nil {
				smallFailed.Add(1)
				firstSmallErr.CompareAndSwap(nil, err.Error())
			}
		}
	})
	ret, act, _, err := q.FindObjectByIdInSameGroup(ctx, "App.S.HugeObj")
	close(stop)
	wg.Wait()
	t.Logf("small queries beside the huge one: %d, %d failed (first: %v)", small.Load(), smallFailed.Load(), firstSmallErr.Load())

	var se *communicator.ServerError
	switch {
	case err == nil:
		if len(act) != n {
			t.Errorf("huge: ret %d, %d endpoints; want %d, or an error reply", ret, len(act), n)
		}
	case !errors.As(err, &se):
		t.Errorf("huge: %v\nwant an error reply for this query (a *ServerError, RetServerEncode: the reply exceeds max-packet-size); "+
			"the registry sent a frame above the limit and the client closed the connection (%d of the %d small queries beside it failed too)",
			err, smallFailed.Load(), small.Load())
	}
}
