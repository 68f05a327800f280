package etcd_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/etcd"
	"github.com/tarscomm/tarscomm/naming"
)

// TestDeadEtcdLoggedOnce: etcd is unreachable (a port this test opened and closed) and stays
// so. Every attempt to read it fails the same way, and each is reported to the watch
// (naming.Reporter), as it should be; but each was also logged as a new warning, for every
// servant, every backoff (at most 2 s): a client of 50 servants logged 25 warnings a second for
// as long as etcd was down, all saying the same thing. Now a failure is logged once until it
// changes, as the other sources do (naming/file, naming/dns, devregistry's reloads).
func TestDeadEtcdLoggedOnce(t *testing.T) {
	port := freePort(t) // closed again: nothing listens there
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", port)}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	core, logs := observer.New(zapcore.WarnLevel)
	src := etcd.New(cli, prefix, etcd.WithLogger(zap.New(core)))

	var mu sync.Mutex
	var fails []error
	got := make(chan struct{}, 1)
	stop := src.WatchReporting(naming.Query{Object: servant}, func(naming.List) {}, func(err error) {
		mu.Lock()
		fails = append(fails, err)
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	})
	defer stop()
	deadline := time.After(30 * time.Second) // a liveness bound
	for {
		mu.Lock()
		n := len(fails)
		mu.Unlock()
		if n >= 4 {
			break
		}
		select {
		case <-got:
		case <-deadline:
			t.Fatalf("only %d failures reported in 30s with etcd down", n)
		}
	}
	mu.Lock()
	texts := []string{}
	for _, err := range fails {
		texts = append(texts, err.Error())
	}
	mu.Unlock()
	slices.Sort(texts)
	warned := logs.FilterMessage("etcd naming: watch ended, reading again").Len()
	if warned > 1 {
		t.Fatalf("etcd down: %d failed reads (distinct texts: %q), %d warnings logged, want 1 until the failure changes",
			len(texts), slices.Compact(texts), warned)
	}
}
