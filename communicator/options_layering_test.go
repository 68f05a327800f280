package communicator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// TestTimeoutLaterWins: call options apply in order and a later one of a kind replaces an earlier
// one, WithTimeout too, so that a caller layering its own options after a helper's defaults
// (opts = append(defaults, mine...)) gets its own: WithTimeout(-1) followed by WithTimeout(1s) is
// a call with a 1s timeout. Before, an invalid WithTimeout failed the call (unsent,
// ErrInvalidTimeout) whatever came after it.
func TestTimeoutLaterWins(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)

	// Sanity: the reverse order fails, as the later (invalid) option says.
	if _, err := sayHello(ctx, sp, "rev", 1, servantproxy.WithTimeout(time.Second), servantproxy.WithTimeout(-1)); !errors.Is(err, servantproxy.ErrInvalidTimeout) {
		t.Fatalf("WithTimeout(1s), WithTimeout(-1): err = %v, want ErrInvalidTimeout (the later option wins)", err)
	}
	for _, bad := range []time.Duration{-1, 0} {
		from, err := sayHello(ctx, sp, "later", 2, servantproxy.WithTimeout(bad), servantproxy.WithTimeout(time.Second))
		if err != nil || from != "a" {
			t.Errorf("WithTimeout(%v), WithTimeout(1s): from %q, err = %v; want the reply from \"a\" "+
				"(the later WithTimeout replaces the earlier, as every other option does)", bad, from, err)
		}
	}
}

// TestNilCallOptionSkipped: a nil CallOption (a conditional option left unset:
// var opt servantproxy.CallOption; if x { opt = WithHash(k) }; Invoke(ctx, ..., opt)) is skipped
// and the call made. Before, it panicked in the caller's goroutine with a nil func call.
func TestNilCallOptionSkipped(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	comm := newComm(t, nil)
	sp := proxyTo(t, comm, g)
	ctx := testCtx(t)
	var opt servantproxy.CallOption // left nil
	calls := []struct {
		what string
		run  func() error
	}{
		{"Invoke", func() error { _, err := sayHello(ctx, sp, "n", 1, opt); return err }},
		{"InvokeOneway", func() error { return onewayHello(ctx, sp, "n", 2, opt) }},
		{"FutureInvoke", func() error {
			_, err := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "n", Seq: 3}, new(hellopb.HelloReply), opt).Get(ctx)
			return err
		}},
	}
	for _, c := range calls {
		var (
			panicked any
			err      error
		)
		func() {
			defer func() { panicked = recover() }()
			err = c.run()
		}()
		if panicked != nil || err != nil {
			t.Errorf("%s with a nil CallOption: panic %v, err %v; want the option skipped and the call made", c.what, panicked, err)
		}
	}
}
