package closetest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/closetest"
)

// TestWithinReturnsCloseError: a Close that returns gives its error back, and t does not fail.
func TestWithinReturnsCloseError(t *testing.T) {
	want := errors.New("closed badly")
	if err := closetest.Within(t, "close", func() error { return want }); err != want {
		t.Fatalf("Within = %v, want the close's own error", err)
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

// TestWithinFailsOnHang: a close that does not return within Limit (shortened here) fails t,
// naming the close, with the goroutines' stacks (the hanging close's among them).
func TestWithinFailsOnHang(t *testing.T) {
	defer func(l time.Duration) { closetest.Limit = l }(closetest.Limit)
	closetest.Limit = 50 * time.Millisecond
	r := &recorder{TB: t}
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_ = closetest.Within(r, "the hanging close", func() error { <-release; return nil })
	if !strings.Contains(r.msg, "the hanging close") || !strings.Contains(r.msg, "TestWithinFailsOnHang.func") {
		t.Fatalf("after %v: Fatalf %q, want it to name the close and dump the goroutines", time.Since(start), r.msg)
	}
}
