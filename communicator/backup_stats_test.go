package communicator_test

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// TestBackupLoserNotCounted: sync calls whose backup request wins (the primary's endpoint is
// slow) are counted once each, as the successes they are: no cancelled call in Stats and no
// exception in the stat report once the losing primaries have ended (BackupStats().Dropped counts
// them). The framework's drop of the loser used to be counted as a call cancelled by its caller,
// and reported to tarsstat as an exception: a servant with backups showed an error rate equal to
// its backups' win rate.
func TestBackupLoserNotCounted(t *testing.T) {
	a := startTGreeter(t, "a")
	a.hold.Store(int64(300 * time.Millisecond)) // slow: the backup to b wins
	b := startGreeter(t, "b", serverOpt{})
	comm := newComm(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: 5 * time.Millisecond,
			BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}))
	sp := proxyToAddrs(t, comm, a.endpoint(), b.endpoint())
	const n = 10
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := sayHello(ctx, sp, "x", uint64(i))
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	bs := sp.BackupStats()
	if bs.Won == 0 {
		t.Fatalf("no backup won (%+v): the test did not exercise backups", bs)
	}
	// The dropped primaries end when a's replies come (300 ms) or at their deadline.
	var tot stats.Counters
	waitFor(t, "the dropped requests to end", func() bool {
		s := comm.Stats()
		tot = s.Total()
		for _, e := range s.Endpoints {
			if e.Pending != 0 {
				return false
			}
		}
		return tot.Calls() >= uint64(n)
	})
	s := comm.Stats()
	var exec int32
	for _, batch := range stat.Messages(s, stat.Options{ModuleName: "App.Client", FromClient: true}, "") {
		for _, body := range batch {
			exec += body.ExecCount
		}
	}
	t.Logf("%d calls, all succeeded, none cancelled by its caller; backups %+v; Stats: ok %d, cancelled %d; stat report execCount %d",
		n, bs, tot.Results[stats.OK], tot.Results[stats.Cancelled], exec)
	if tot.Results[stats.OK] != n || tot.Calls() != n {
		t.Errorf("Stats counts %d calls, %d of them ok; want the %d calls made, all ok", tot.Calls(), tot.Results[stats.OK], n)
	}
	if tot.Results[stats.Cancelled] != 0 || exec != 0 {
		t.Errorf("Stats counts %d cancelled calls and the stat report %d exceptions, though no caller cancelled and all %d calls succeeded",
			tot.Results[stats.Cancelled], exec, n)
	}
}
