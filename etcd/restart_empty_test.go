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

// TestRestartedEmpty: etcd is restarted without its data (a member rebuilt, a container without
// a volume: same address, revisions start again from 1) under a running watch: the Source reads
// the prefix again and pushes the new member's list. The etcd client resumes the watch by itself
// from the old revision + 1, where the new member's keys (at lower revisions) never show, and
// the watch channel never failed: the Source used to keep the endpoint that no longer existed
// and never learn the one registered since. It now reads etcd's revision every few seconds and
// starts again when it went back.
func TestRestartedEmpty(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	put := func(c *clientv3.Client, port int) { putLoopback(t, c, port) }
	put(cli, 4001)
	// Some history, as any etcd in use has (other objects' registrations, renewals).
	for i := range 30 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := cli.Put(ctx, fmt.Sprintf("/other/%d", i), "x")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	src := etcd.New(cli, prefix, etcd.WithDebounce(0), etcd.WithLogger(zaptest.NewLogger(t)))
	rec := newRecorder()
	stop := src.Watch(naming.Query{Object: servant}, rec.push)
	defer stop()
	rec.waitFor(t, 5*time.Second, "4001", func(l naming.List) bool { return len(l.Active) == 1 && l.Active[0].Port == 4001 })

	es.stop()
	es.dir = t.TempDir() // the member comes back without its data
	es.start(t)
	other := newClient(t, es)
	put(other, 4002) // the server registered on the new member
	// The Source's own client reads the new member fine: only the watch is stale.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix+"/"+servant+"/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get through the Source's client after the restart: %v, %v", resp, err)
	}

	rec.waitFor(t, 15*time.Second, "the new member's list [4002]", func(l naming.List) bool {
		return len(l.Active) == 1 && l.Active[0].Port == 4002
	})
}
