package asyncproc

import (
	"errors"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestRefusalNamesItsLimit: a refused Reserve matches ErrQueueFull and names the limit that
// refused it, the setting a user raises (before, both read "queue full, call not sent").
func TestRefusalNamesItsLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
		key  string
	}{
		{"in flight", Options{Workers: 1, QueueCap: 100, InFlightLimit: 1}, "async-inflight-limit"},
		{"callbacks waiting", Options{Workers: 1, QueueCap: 1}, "asyncqueuecap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.opts)
			block := make(chan struct{})
			if err := p.Reserve(); err != nil {
				t.Fatal(err)
			}
			if tt.opts.InFlightLimit == 0 {
				// One callback running, one waiting: QueueCap 1 is reached.
				p.Deliver(&call.Call{Finish: func(*call.Call) { <-block }})
				if err := p.Reserve(); err != nil {
					t.Fatal(err)
				}
				p.Deliver(&call.Call{Finish: func(*call.Call) {}}) // the one worker takes one at most: one waits
			}
			err := p.Reserve()
			if !errors.Is(err, call.ErrQueueFull) || !strings.Contains(err.Error(), tt.key) {
				t.Errorf("Reserve over the limit: %v, want ErrQueueFull naming %s", err, tt.key)
			}
			if err == nil {
				p.Release()
			}
			if tt.opts.InFlightLimit > 0 {
				p.Release()
			}
			close(block)
			p.Close()
		})
	}
}
