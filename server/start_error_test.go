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

// TestStartEndpointFormSaysWhatToWrite: Start given the endpoint form of proxy strings and
// serverconf ("tcp -h 127.0.0.1 -p 18030") is refused with the address to write instead, and
// the Server can still be started. Before, the error was the listener's "missing port in
// address", though the port is there (found by a review following the docs).
func TestStartEndpointFormSaysWhatToWrite(t *testing.T) {
	leakCheck(t)
	s := New()
	mustHandle(t, s, "App.S.Obj", "echo", echo)
	for addr, want := range map[string]string{
		"tcp -h 127.0.0.1 -p 18030": `write "127.0.0.1:18030"`,
		"udp -h ::1 -p 18030":       `write "udp://[::1]:18030"`,
		"ssl -h 127.0.0.1 -p 18030": "WithTLS",
	} {
		if _, err := s.Start(addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Start(%q): %v, want an error saying %s", addr, err, want)
		}
	}
	stopOnCleanup(t, s)
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start with host:port after the refusals: %v", err)
	}
}
