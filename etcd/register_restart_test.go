package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tarscomm/tarscomm/etcd"
)

// waitKeyBack waits until key holds value under a live lease other than not.
func waitKeyBack(t *testing.T, cli *clientv3.Client, key, value string, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := cli.Get(ctx, key)
		cancel()
		if err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == value && resp.Kvs[0].Lease != 0 {
			return
		}
		last = fmt.Sprintf("get: %v, %v", resp, err)
		if time.Now().After(deadline) {
			t.Fatalf("%s: the registration's key is not back within %v: %s", what, within, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRegisterAfterRebuild: etcd is rebuilt without its data under a live registration: the
// lease is gone with the data, so the keeper must put the key again under a new lease.
func TestRegisterAfterRebuild(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	ep := loopbackEndpoint(6001)
	r, err := etcd.Register(context.Background(), cli, prefix, servant, ep, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Deregister(ctx)
	})
	es.stop()
	es.dir = t.TempDir()
	es.start(t)
	waitKeyBack(t, cli, r.Key(), ep.String(), 15*time.Second, "rebuilt etcd")
}

// TestRegisterAfterLongOutage: etcd is down for longer than the TTL, then back with its data.
func TestRegisterAfterLongOutage(t *testing.T) {
	es := startEtcd(t)
	cli := newClient(t, es)
	ep := loopbackEndpoint(6002)
	r, err := etcd.Register(context.Background(), cli, prefix, servant, ep, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Deregister(ctx)
	})
	es.stop()
	time.Sleep(4 * time.Second)
	es.start(t)
	waitKeyBack(t, cli, r.Key(), ep.String(), 15*time.Second, "etcd back after 4 s")
	// And it stays: past the old lease's TTL and its extension.
	time.Sleep(5 * time.Second)
	waitKeyBack(t, cli, r.Key(), ep.String(), 1*time.Second, "5 s later")
}
