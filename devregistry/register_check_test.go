package devregistry_test

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/devregistry"
)

// TestRegisterRejectsUnusable: a registration no client can use is refused with 400, as a
// missing port is: "-p 0" (ParseEndpoint allows it for servers asking for a free port; no client
// can dial it) and an object name with a newline or a carriage return were accepted, served and
// listed in /objects.
func TestRegisterRejectsUnusable(t *testing.T) {
	r := startRegistry(t, devregistry.Options{HTTPAddr: "127.0.0.1:0"})
	ctx := context.Background()
	for _, tc := range []struct{ obj, ep string }{
		{"App.S.Obj", "tcp -h 127.0.0.1 -p 0"},
		{"App.S.Obj\n", "tcp -h 127.0.0.1 -p 9000"},
	} {
		if err := devregistry.Register(ctx, r.HTTPURL(), tc.obj, tc.ep, 0); err == nil {
			t.Errorf("Register(%q, %q) accepted (served: %v); want 400", tc.obj, tc.ep, r.Lookup(tc.obj).Active)
		}
	}
}
