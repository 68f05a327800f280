package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/naming"
)

// TestDeadEtcdSaysWhy: the naming key names an etcd nobody answers on (a port this test opened
// and closed). A call made before any list waits for it within its deadline (the default 3 s)
// and fails with ErrNaming, wrapping the source's last failure ("a dead registry: its connection
// error", the README says), as the tars, file and dns sources do. Before, the etcd source
// reported nothing (it was not a naming.Reporter), so the call only said "no answer from its
// source", though every read of etcd had failed for seconds.
func TestDeadEtcdSaysWhy(t *testing.T) {
	port := freePort(t) // closed again: nothing listens there
	cfg, err := conf.Parse(fmt.Appendf(nil, "naming = \"etcd://127.0.0.1:%d%s\"\n", port, prefix))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	// The call's deadline is the default sync-invoke-timeout, 3 s: the source's first read
	// (bounded at 1 s) fails within it.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	_, err = sayHello(ctx, sp, "dead", 1)
	if !errors.Is(err, communicator.ErrNaming) {
		t.Fatalf("call with etcd dead: %v; want ErrNaming", err)
	}
	var ne *naming.Error
	if !errors.As(err, &ne) || ne.Cause == nil {
		t.Fatalf("call with etcd dead failed with %q: want it to wrap the source's last failure (etcd unreachable), it wraps none", err)
	}
}
