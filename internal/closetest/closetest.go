package closetest

import (
	"runtime"
	"testing"
	"time"
)

// Limit bounds every Close run by Within: far above what a Close takes on a busy machine under
// -race, far below a test binary's timeout. (A variable only for this package's own test.)
var Limit = 20 * time.Second

// Within runs close (what names it, for the failure) and returns its error; if it has not
// returned within Limit, t fails at once with the stacks of every goroutine. It may be called
// from a Cleanup.
func Within(t testing.TB, what string, close func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- close() }()
	tm := time.NewTimer(Limit)
	defer tm.Stop()
	select {
	case err := <-done:
		return err
	case <-tm.C:
		t.Fatalf("%s did not return within %v; goroutines:\n%s", what, Limit, Stacks())
		return nil
	}
}

// Stacks returns the stacks of every goroutine.
func Stacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
