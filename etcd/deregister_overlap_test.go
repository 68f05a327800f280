package etcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tarscomm/tarscomm/etcd"
)

// TestDeregisterOldKeepsNewer: a server changes what it advertises for its address (here its
// weight; a new -t or -s is the same), make-before-break: it registers the new endpoint, then
// deregisters the old registration. Both have the key <prefix>/<object>/<host:port>; the second
// Register put the key under its own lease. The old registration's Deregister must take away only
// what it owns: the key now belongs to the newer registration, whose keeper goes on renewing it.
// Before, it deleted the key anyway, and the newer registration never put it back (its lease is
// alive): the live server was gone from every client's list for as long as it ran.
func TestDeregisterOldKeepsNewer(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	old := mustEndpoint(t, "tcp -h 127.0.0.1 -p 7001 -t 60000")
	next := mustEndpoint(t, "tcp -h 127.0.0.1 -p 7001 -t 60000 -v 1 -w 50")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r1, err := etcd.Register(ctx, cli, prefix, servant, old, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r1.Deregister(context.Background()) })
	r2, err := etcd.Register(ctx, cli, prefix, servant, next, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r2.Deregister(context.Background()) })
	if r1.Key() != r2.Key() {
		t.Fatalf("keys %q and %q: the test needs one key", r1.Key(), r2.Key())
	}
	if err := r1.Deregister(ctx); err != nil {
		t.Fatalf("old Deregister: %v", err)
	}
	// Past a renewal of r2's lease and a TTL: the key must be there, with r2's value and lease.
	time.Sleep(3 * time.Second)
	resp, err := cli.Get(ctx, r2.Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("after the old registration's Deregister, the newer registration's key %q is gone (%d keys) while its keeper still renews lease %x: want it kept, with %q",
			r2.Key(), len(resp.Kvs), r2.Lease(), next.String())
	}
	if kv := resp.Kvs[0]; string(kv.Value) != next.String() || clientv3.LeaseID(kv.Lease) != r2.Lease() {
		t.Fatalf("key %q holds %q under lease %x: want %q under the newer registration's lease %x", r2.Key(), kv.Value, kv.Lease, next.String(), r2.Lease())
	}
}
