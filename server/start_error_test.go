package server

import (
	"context"
	"strings"
	"testing"
)

// TestStartBadAddressError: Start on an address a TCP listener refuses (a port out of
// range, no port, an unknown network) fails, and its error should say why: the listener's error
// ("invalid port", "missing port in address", "unknown network"), every time. Before, Start
// picked between two channels that were both ready (booted, holding the listener's error, and
// runDone, already closed, with runErr nil), and about one Start in two reported "engine exited
// before it booted" instead, which hid the cause (found by the misuse review).
func TestStartBadAddressError(t *testing.T) {
	cases := []struct{ addr, want string }{
		{"127.0.0.1:70000", "invalid port"},
		{"127.0.0.1", "missing port in address"},
		{"foo://127.0.0.1:0", "unknown network"},
	}
	for _, c := range cases {
		misleading := 0
		const tries = 20
		var last error
		for range tries {
			s := New()
			mustHandle(t, s, "App.S.Obj", "echo", echo)
			_, err := s.Start(c.addr)
			if err == nil {
				_ = s.Stop(context.Background())
				t.Fatalf("Start(%q) succeeded, want an error", c.addr)
			}
			if !strings.Contains(err.Error(), c.want) {
				misleading++
				last = err
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			_ = s.Stop(ctx)
			cancel()
		}
		if misleading > 0 {
			t.Errorf("Start(%q): %d of %d errors do not name the listener's failure (%q), e.g. %q",
				c.addr, misleading, tries, c.want, last)
		}
	}
}
