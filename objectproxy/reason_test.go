package objectproxy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestReasons: a call that cannot be routed ends with the reason its ObjectProxy was given.
// A parked call whose deadline passes fails with ErrTimeout wrapping Options.WaitReason's error (or
// ErrTimeout alone without one); a call finding no endpoint fails with Options.NoEndpoint
// (or ErrNoEndpoint alone).
func TestReasons(t *testing.T) {
	why := errors.New("registry query failed: connection refused")
	noEP := errors.Join(call.ErrNoEndpoint, errors.New("no naming source"))
	tests := []struct {
		name     string
		await    bool         // park calls until the first list
		reason   func() error // WaitReason; nil: not set
		noEP     error        // Options.NoEndpoint; nil: not set
		wantIs   []error
		wantSame error // when set, the error must be exactly this
	}{
		{name: "parked, no reason", await: true, wantSame: call.ErrTimeout},
		{name: "parked, reason nil now", await: true, reason: func() error { return nil }, wantSame: call.ErrTimeout},
		{name: "parked, reason", await: true, reason: func() error { return why }, wantIs: []error{call.ErrTimeout, context.DeadlineExceeded, why}},
		{name: "no endpoint", wantSame: call.ErrNoEndpoint},
		{name: "no endpoint, reason", noEP: noEP, wantSame: noEP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := loadThread(t)
			o, err := th.NewObjectProxy(endpoint.Target{Object: "Test.Server.Obj"}, objectproxy.Options{
				Await: tt.await, Demand: func() {}, WaitReason: tt.reason, NoEndpoint: tt.noEP,
			})
			if err != nil {
				t.Fatal(err)
			}
			c := call.Get()
			c.Dest, c.Servant, c.Func = o, "Test.Server.Obj", "f"
			c.Start = call.Now()
			c.Deadline = c.Start + int64(20*time.Millisecond)
			if err := th.Submit(c); err != nil {
				t.Fatal(err)
			}
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not end")
			}
			got := c.Err
			call.Put(c)
			if tt.wantSame != nil && got != tt.wantSame {
				t.Fatalf("err = %v, want exactly %v", got, tt.wantSame)
			}
			for _, w := range tt.wantIs {
				if !errors.Is(got, w) {
					t.Errorf("err = %v, does not match %v", got, w)
				}
			}
		})
	}
}
