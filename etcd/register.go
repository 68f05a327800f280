package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tarscomm/tarscomm/endpoint"
)

// Registration is one endpoint put by Register; its keeper renews the lease until Deregister
// or until the client is closed.
type Registration struct {
	cli   *clientv3.Client
	key   string
	value string
	ttl   time.Duration

	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	lease clientv3.LeaseID
}

// Register puts ep for object under prefix (the key <prefix>/<object>/<host:port>, the value
// ep.String()) with a lease of ttl (rounded up to whole seconds, at least 1 s) and keeps the
// lease alive. It returns once the key is written. A server that dies stops renewing, and etcd
// deletes the key when the lease expires; a lease lost while the server lives is replaced by a
// new one and the key put again.
func Register(ctx context.Context, cli *clientv3.Client, prefix, object string, ep endpoint.Endpoint, ttl time.Duration) (*Registration, error) {
	if object == "" || ep.Host == "" || ep.Port == 0 {
		return nil, errors.New("etcd: Register needs an object and an endpoint with a host and a port")
	}
	r := &Registration{cli: cli, key: Key(prefix, object, ep), value: ep.String(), ttl: max(ttl, time.Second), done: make(chan struct{})}
	lease, err := r.put(ctx)
	if err != nil {
		return nil, err
	}
	r.lease = lease
	kctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go r.keep(kctx, lease)
	return r, nil
}

// Key returns the registration's key.
func (r *Registration) Key() string { return r.key }

// Lease returns the lease the key is held by now.
func (r *Registration) Lease() clientv3.LeaseID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lease
}

// put grants a lease and puts the key under it.
func (r *Registration) put(ctx context.Context) (clientv3.LeaseID, error) {
	secs := int64((r.ttl + time.Second - 1) / time.Second)
	g, err := r.cli.Grant(ctx, secs)
	if err != nil {
		return 0, err
	}
	if _, err := r.cli.Put(ctx, r.key, r.value, clientv3.WithLease(g.ID)); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_, _ = r.cli.Revoke(rctx, g.ID)
		cancel()
		return 0, err
	}
	return g.ID, nil
}

// keep renews lease until ctx ends or the client closes; when the lease is lost it registers
// again with a new one, retrying with backoff.
func (r *Registration) keep(ctx context.Context, lease clientv3.LeaseID) {
	defer close(r.done)
	backoff := minBackoff
	for {
		ch, err := r.cli.KeepAlive(ctx, lease)
		if err == nil {
			for range ch { // drained until the lease is lost, ctx ends or the client closes
				backoff = minBackoff
			}
		}
		for {
			if ctx.Err() != nil || r.cli.Ctx().Err() != nil {
				return
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-r.cli.Ctx().Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
			pctx, cancel := context.WithTimeout(ctx, r.ttl)
			l, err := r.put(pctx)
			cancel()
			if err == nil {
				lease = l
				r.mu.Lock()
				r.lease = l
				r.mu.Unlock()
				break
			}
		}
	}
}

// Deregister stops renewing the lease, then deletes the key (unless it no longer holds this
// registration's lease: a newer registration of the same endpoint, or a put by hand, rewrote it)
// and revokes the lease, so that the endpoint leaves the lists at once (a graceful stop). It
// waits for the keeper to end. Calling it again does nothing and returns nil.
func (r *Registration) Deregister(ctx context.Context) error {
	r.cancel()
	<-r.done
	r.mu.Lock()
	lease := r.lease
	r.lease = 0
	r.mu.Unlock()
	if lease == 0 {
		return nil
	}
	// The key only if it is still this registration's: a newer one for the same endpoint (new
	// options, registered before this one leaves) holds it under its own lease.
	_, err := r.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(r.key), "=", lease)).
		Then(clientv3.OpDelete(r.key)).
		Commit()
	if _, rerr := r.cli.Revoke(ctx, lease); err == nil && !errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
		err = rerr
	}
	return err
}
