package communicator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// A call and its backup request are one call, and Stats counts them once (call.Pair) however
// the pair ends. Before, that held only when one answered first (TestBackupLoserNotCounted):
// when the backup found no other endpoint, when the caller gave up on both or both reached the
// deadline, each half was recorded as a call of its own (found by the accounting mode of
// TestSoakEverything: with backup-request on, Stats counted more calls than were made).

// backupPairOfTwo starts two soak servers and a backupComm with a proxy to both.
func backupPairOfTwo(t *testing.T) (*communicator.Communicator, *servantproxy.ServantProxy) {
	t.Helper()
	a, b := startSoakServer(t), startSoakServer(t)
	t.Cleanup(func() { a.stop(t); b.stop(t) })
	comm := backupComm(t)
	sp, err := comm.Proxy(soakServant + "@" + tcpEndpoint(a.addr) + ":" + tcpEndpoint(b.addr))
	if err != nil {
		t.Fatal(err)
	}
	return comm, sp
}

// backupComm starts a Communicator whose soakServant sends a backup after 5 ms, with its budget
// never in the way.
func backupComm(t *testing.T) *communicator.Communicator {
	t.Helper()
	return newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{soakServant: {LoadBalance: "roundrobin", BackupRequest: 5 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}, communicator.WithLogger(zap.NewNop()))
}

// backupCall makes one call of kind (sync or async) named name (its delay on the server) under
// ctx, and returns its error.
func backupCall(t *testing.T, ctx context.Context, kind string, sp *servantproxy.ServantProxy, name string, seq uint64, opts ...servantproxy.CallOption) error {
	t.Helper()
	req := &hellopb.HelloRequest{Name: name, Seq: seq}
	switch kind {
	case "sync":
		return sp.Invoke(ctx, "SayHello", req, new(hellopb.HelloReply), opts...)
	case "async":
		done := make(chan error, 1)
		if err := sp.AsyncInvoke(ctx, "SayHello", req, new(hellopb.HelloReply), func(err error) { done <- err }, opts...); err != nil {
			return err
		}
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("async call %d: no callback within 10s", seq)
		}
	}
	panic(kind)
}

// settledTotal waits until no call is pending on any endpoint (the backups' halves have ended)
// and returns soakServant's counters.
func settledTotal(t *testing.T, comm *communicator.Communicator) stats.Counters {
	t.Helper()
	var tot stats.Counters
	waitFor(t, "every request to end", func() bool {
		s := comm.Stats()
		for _, e := range s.Endpoints {
			if e.Pending != 0 {
				return false
			}
		}
		tot = stats.Counters{}
		for _, c := range s.Calls {
			if c.Servant == soakServant {
				for r, n := range c.Results {
					tot.Results[r] += n
				}
			}
		}
		return true
	})
	time.Sleep(100 * time.Millisecond) // a half ending now would be counted by now
	tot = stats.Counters{}
	for _, c := range comm.Stats().Calls {
		if c.Servant == soakServant {
			for r, n := range c.Results {
				tot.Results[r] += n
			}
		}
	}
	return tot
}

func resultsOf(c stats.Counters) map[string]uint64 {
	m := map[string]uint64{}
	for r, n := range c.Results {
		if n != 0 {
			m[stats.Result(r).String()] = n
		}
	}
	return m
}

// TestBackupNoOtherEndpointCountedOnce: a servant with one endpoint, slower than the
// backup delay: each call's backup finds no other endpoint (objectproxy/backup.go fails it with
// ErrNoEndpoint), the call is answered by its first request. Stats must count each call once, as
// the success it is. Before, it counted a success and a no_endpoint failure for each (a healthy
// one-endpoint servant showed a 50% error rate in the stat report).
func TestBackupNoOtherEndpointCountedOnce(t *testing.T) {
	for _, kind := range []string{"sync", "async"} {
		t.Run(kind, func(t *testing.T) {
			a := startSoakServer(t)
			t.Cleanup(func() { a.stop(t) })
			comm := backupComm(t)
			sp, err := comm.Proxy(soakServant + "@" + tcpEndpoint(a.addr))
			if err != nil {
				t.Fatal(err)
			}
			const n = 10
			for i := range n {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := backupCall(t, ctx, kind, sp, "d40ms", uint64(i))
				cancel()
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			bs := sp.BackupStats()
			tot := settledTotal(t, comm)
			var exec, succ int32
			for _, batch := range stat.Messages(comm.Stats(), stat.Options{ModuleName: "App.Client", FromClient: true}, "") {
				for _, body := range batch {
					exec += body.ExecCount
					succ += body.Count
				}
			}
			t.Logf("backups %+v; stat report: %d successes, %d exceptions", bs, succ, exec)
			if exec != 0 {
				t.Errorf("the stat report (tarsstat) counts %d exceptions for %d %s calls that all succeeded", exec, n, kind)
			}
			if tot.Calls() != n || tot.Results[stats.OK] != n {
				t.Errorf("%d %s calls made, all answered: Stats counts %d calls %v; want %d, all ok (a backup that found no other endpoint is counted as a call of its own)",
					n, kind, tot.Calls(), resultsOf(tot), n)
			}
		})
	}
}

// TestBackupCancelledCountedOnce: two endpoints, both slower than the backup delay;
// the caller cancels each call after its backup went out. Each call is one cancelled call.
// Before, Stats counted two (the primary and the backup, each abandoned).
func TestBackupCancelledCountedOnce(t *testing.T) {
	for _, kind := range []string{"sync", "async"} {
		t.Run(kind, func(t *testing.T) {
			comm, sp := backupPairOfTwo(t)
			const n = 5
			for i := range n {
				ctx, cancel := context.WithCancel(context.Background())
				tm := time.AfterFunc(100*time.Millisecond, cancel)
				err := backupCall(t, ctx, kind, sp, "d500ms", uint64(i))
				tm.Stop()
				cancel()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("call %d: %v, want cancelled", i, err)
				}
			}
			bs := sp.BackupStats()
			if bs.Sent != n {
				t.Fatalf("backups %+v: want %d sent (the test needs every call to have its backup out)", bs, n)
			}
			tot := settledTotal(t, comm)
			if tot.Calls() != n || tot.Results[stats.Cancelled] != n {
				t.Errorf("%d %s calls made, each cancelled by its caller after its backup went out: Stats counts %d calls %v; want %d, all cancelled",
					n, kind, tot.Calls(), resultsOf(tot), n)
			}
		})
	}
}

// TestBackupTimeoutCountedOnce: two endpoints, both slower than the call's deadline;
// each call's backup goes out and both requests reach the deadline. Each call is one timeout.
// Before, Stats counted two.
func TestBackupTimeoutCountedOnce(t *testing.T) {
	for _, kind := range []string{"sync", "async"} {
		t.Run(kind, func(t *testing.T) {
			comm, sp := backupPairOfTwo(t)
			const n = 5
			for i := range n {
				err := backupCall(t, context.Background(), kind, sp, "d2s", uint64(i), servantproxy.WithTimeout(150*time.Millisecond))
				if !errors.Is(err, communicator.ErrTimeout) {
					t.Fatalf("call %d: %v, want a timeout", i, err)
				}
			}
			// The timeouts take the endpoints out of rotation after a few calls, and a backup
			// goes to a healthy endpoint only: the first calls have theirs out.
			bs := sp.BackupStats()
			if bs.Sent == 0 {
				t.Fatalf("backups %+v: want some sent (the test needs calls with their backup out)", bs)
			}
			tot := settledTotal(t, comm)
			if tot.Calls() != n || tot.Results[stats.Timeout] != n {
				t.Errorf("%d %s calls made, each timed out with its backup out: Stats counts %d calls %v; want %d, all timeouts",
					n, kind, tot.Calls(), resultsOf(tot), n)
			}
		})
	}
}
