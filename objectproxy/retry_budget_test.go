package objectproxy_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/netthread"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// refusedPort returns a loopback port nothing listens on (one this test listened on and closed).
func refusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// TestRetryBudgetCountsRetriesMade: a call whose connects are refused on both endpoints is tried
// on each once (one retry) and fails; the retry budget counts that one retry. A retry that found
// no endpoint left used to take a token too, and RetryStats counted a retry that never happened.
func TestRetryBudgetCountsRetriesMade(t *testing.T) {
	th := rawThread(t, netthread.Options{})
	eps := []endpoint.Endpoint{
		{Proto: endpoint.TCP, Host: "127.0.0.1", Port: refusedPort(t), Weight: -1},
		{Proto: endpoint.TCP, Host: "127.0.0.1", Port: refusedPort(t), Weight: -1},
	}
	o := rawObj(t, th, eps, objectproxy.Options{Retries: 5, Guard: objectproxy.Guard{RetryRatio: 1, RetryMin: 100}})
	_, _, err := wait(t, submit(t, th, o, "F", false, 0, 5*time.Second))
	var ce *call.ConnError
	if !errors.As(err, &ce) {
		t.Fatalf("call to two refusing endpoints: %v, want a connection error", err)
	}
	var retries, denied uint64
	done := make(chan struct{})
	th.Execute(func() { retries, denied = o.RetryStats(); close(done) })
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not run the task")
	}
	if retries != 1 || denied != 0 {
		t.Fatalf("RetryStats = %d retries, %d denied; want 1, 0 (one call, two endpoints)", retries, denied)
	}
}
