package communicator_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestConfigEditedAfterNewChangesNothing: New takes its conf.Config by value, validates it, and
// Config says it "returns the configuration the Communicator runs with". A caller that goes on
// editing its own Config value after New (for the next Communicator, say) must not change the
// one already running: here the caller's servant table is given a load-balance that Validate
// refuses, after New returned. The Communicator should keep the validated roundrobin: the
// proxy binds, its call succeeds, and Config still reports what New was given. Before, New kept
// the caller's servant map: StringToProxy failed with `unknown balancer "no-such-balancer"`.
func TestConfigEditedAfterNewChangesNothing(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	cfg := conf.Default()
	cfg.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", Retries: 1}}
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, comm) })

	// The caller reuses its value: what it does to it now is no business of comm's.
	cfg.Servants[servant] = conf.Servant{LoadBalance: "no-such-balancer", Retries: 99}
	if err := cfg.Validate(); err == nil {
		t.Fatal("test set-up: the edited config should be invalid")
	}

	if got := comm.Config().Servants[servant]; got.LoadBalance != "roundrobin" || got.Retries != 1 {
		t.Errorf("Config().Servants[%q] = {load-balance %q, retries %d} after the caller edited its own copy; want the validated {roundrobin, 1} New was given",
			servant, got.LoadBalance, got.Retries)
	}
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+g.endpoint(), &sp); err != nil {
		t.Fatalf("StringToProxy after the caller edited its own Config value: %v; want it bound with the configuration New validated", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := sayHello(ctx, &sp, "x", 1); err != nil {
		t.Fatalf("call: %v", err)
	}
}

// TestConfigResultEditedChangesNothing: Config returns the configuration by value. Editing the
// value it returned (a caller deriving a second configuration from the first) must not reach
// into the running Communicator: a proxy made afterwards must still get the validated settings.
// Before, Config returned the running map itself.
func TestConfigResultEditedChangesNothing(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {Retries: 1}}
	})

	derived := comm.Config()
	derived.Servants[servant] = conf.Servant{LoadBalance: "no-such-balancer"}

	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+g.endpoint(), &sp); err != nil {
		t.Fatalf("StringToProxy after editing the value Config returned: %v; want it bound with the configuration New validated (the edit should have changed only the caller's copy)", err)
	}
	if got := comm.Config().Servants[servant]; got.LoadBalance != "" || got.Retries != 1 {
		t.Errorf("Config().Servants[%q] = %+v after editing an earlier Config() result; want {Retries: 1} as New was given", servant, got)
	}
}
