package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/etcd"
	"github.com/tarscomm/tarscomm/naming"
)

// putOthers writes n keys outside the servant's prefix through c (history, as any etcd in use has).
func putOthers(t *testing.T, c *clientv3.Client, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Put(ctx, fmt.Sprintf("/other/%d", i), "x")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRebuiltEtcdRevisionPast: etcd is rebuilt without its data (same addresses) and, by the
// time the Source's client reaches it, the new member's revision is already past the last
// revision the watch saw (servers re-registered, other objects written: a busy etcd). The endpoint
// the watch knew is gone and another one is registered on the new member. The Source should push
// the new member's list, as it does when the new revision is lower (TestRestartedEmpty). Before,
// it kept the stale list forever, because its only test of "etcd lost its history" was a
// revision lower than one already seen; now a read at the watch's revision whose keys are not the
// watch's says so too.
//
// The new member's data is prepared on a member of the same peer address but another client
// port, so that the Source's client cannot reach it before its revision is past the old one.
func TestRebuiltEtcdRevisionPast(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	putLoopback(t, cli, 5001)
	putOthers(t, cli, 10) // the old member's revision: 12
	src := etcd.New(cli, prefix, etcd.WithDebounce(0), etcd.WithLogger(zaptest.NewLogger(t)))
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: servant}, rec.push)
	defer stop()
	rec.waitFor(t, 5*time.Second, "[5001]", func(l naming.List) bool { return len(l.Active) == 1 && l.Active[0].Port == 5001 })

	es.stop()
	clientPort := es.client
	es.dir = t.TempDir() // the member comes back without its data
	// Prepare the rebuilt member's data where the Source's client does not look.
	es.client = freePort(t)
	es.start(t)
	prep := newClient(t, es)
	putLoopback(t, prep, 5002) // revision 2 of the new member: the server that registered there
	putOthers(t, prep, 40)     // the new member's revision: 42, past the old 12
	_ = prep.Close()
	es.stop()
	// The rebuilt member on the old address.
	es.client = clientPort
	es.start(t)

	// The Source's client reads the new member: the key of 5002, none of 5001.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix+"/"+servant+"/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != loopbackKey(5002) {
		t.Fatalf("Get through the Source's client after the rebuild: %v, %v", resp, err)
	}
	// Three of the Source's 5 s revision checks, and its reconnection backoff, fit in 15 s.
	rec.waitFor(t, 15*time.Second, "the rebuilt member's list [5002] (the Source kept the endpoint etcd no longer has)", func(l naming.List) bool {
		return len(l.Active) == 1 && l.Active[0].Port == 5002
	})
}
