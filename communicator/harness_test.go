package communicator_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/server"
)

// The harness of the end-to-end suite: bounded Close, the -short switch and the timing scenarios.
//
// Under make test (with -race, on a machine that may be busy) a test asserts what happened: which
// calls completed, how, where. A wall-clock bound there is only a liveness bound of seconds. The
// properties that are about time (recovery within 200ms, a p99, a share of calls a balancer sends
// to a slow endpoint) are figures: every run logs them (timingFigure), and make test-timing, which
// runs the tests that have them without -race on an idle machine, fails on a gross miss.

// closeWithin runs close (what names it) and returns its error; if it has not returned within
// closetest.Limit, t fails at once with the stacks of every goroutine. It may be called from a
// Cleanup.
func closeWithin(t testing.TB, what string, close func() error) error {
	t.Helper()
	return closetest.Within(t, what, close)
}

// closeComm closes c within closetest.Limit (see closeWithin) and returns Close's error.
func closeComm(t testing.TB, c *communicator.Communicator) error {
	t.Helper()
	return closeWithin(t, "Communicator.Close", c.Close)
}

// stopServer stops s, waiting up to 5s for handlers in flight, within closetest.Limit (see
// closeWithin); it returns Stop's error.
func stopServer(t testing.TB, what string, s *server.Server) error {
	t.Helper()
	return closeWithin(t, what+" Stop", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.Stop(ctx)
	})
}

// startEcho starts a tarscomm server on loopback named name (its logger's name) with opts,
// serving the test servant's function "Echo" with h, and returns its address; t.Cleanup stops
// it (after the cleanups registered later: release what h waits for in one of those).
func startEcho(t *testing.T, name string, h server.HandlerFunc, opts ...server.Option) (*server.Server, string) {
	t.Helper()
	endToEnd(t)
	s := server.New(append([]server.Option{server.WithLogger(zaptest.NewLogger(t).Named(name))}, opts...)...)
	if err := s.Handle(servant, "Echo", h); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, name, s) })
	return s, addr.String()
}

// allStacks returns the stacks of every goroutine.
func allStacks() []byte { return closetest.Stacks() }

// endToEnd skips t under go test -short: it starts servers and Communicators over loopback, the
// end-to-end suite this package is. Every helper that starts one calls it.
func endToEnd(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
}

// timingEnv set to 1 makes the run a timing run (make test-timing): the figures of timing
// properties are checked against their gross bounds. It needs a build without -race and an idle
// machine.
const timingEnv = "TARSCOMM_TEST_TIMING"

// timingRun is true in a timing run (see timingEnv).
var timingRun = os.Getenv(timingEnv) == "1"

// timingFigure reports a figure of a timing property: what it is, whether it met its target, and
// whether it missed it grossly. Every run logs it (go test -v shows it, make test-timing lists
// it); only a timing run without -race fails, and only on a gross miss.
func timingFigure(t testing.TB, met, grossMiss bool, format string, args ...any) {
	t.Helper()
	verdict := "met"
	if !met {
		verdict = "MISSED"
	}
	msg := fmt.Sprintf(format, args...)
	t.Logf("TIMING %s: %s [target %s]", t.Name(), msg, verdict)
	if timingRun && !raceEnabled && grossMiss {
		t.Errorf("TIMING %s: %s: a gross miss of the target (make test-timing needs an idle machine)", t.Name(), msg)
	}
}

// live is the liveness bound of the suite: far above how long anything that works takes, even
// on a busy 2-core machine under -race. A test that waits longer than live for something has
// found a hang, not a slow machine.
const live = 10 * time.Second

// livenessTimeouts makes connect and call timeouts liveness bounds, for tests whose outcome is
// that every call succeeds: on a busy machine a call is late, not lost.
func livenessTimeouts(c *conf.Config) {
	c.ConnectTimeout = live
	c.SyncInvokeTimeout = 3 * live
	c.AsyncInvokeTimeout = 3 * live
}

// waitFor polls cond every 5ms until it holds and returns how long that took, or fails t after
// live: for outcomes that come, late or not, unless something hangs.
func waitFor(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > live {
			t.Fatalf("%s: not within %v (a liveness bound: it should take far less)", what, live)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// within reports how long something took whose bound is a timing target: a figure (see
// timingFigure). t fails only past target + live, where it did not happen at all in good time.
func within(t testing.TB, what string, took, target time.Duration) {
	t.Helper()
	if took > target+live {
		t.Errorf("%s took %v: far past its target %v, a hang rather than a slow machine", what, took, target)
	}
	timingFigure(t, took <= target, took > 3*target+500*time.Millisecond, "%s took %v (target at most %v)", what, took, target)
}
