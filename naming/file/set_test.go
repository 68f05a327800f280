package file

import (
	"strings"
	"testing"
)

// TestParseRefusesMalformedSet: an endpoint whose -s is not "name.area.group" (TarsCpp's rule,
// endpoint.SetDivisionProblem) fails the parse, naming the line and the set: set routing would
// treat it as in no set, so a typo ("app.sz" for "app.sz.1") would take the server out of its
// set in silence. Before, the file was accepted.
func TestParseRefusesMalformedSet(t *testing.T) {
	for _, set := range []string{"app.sz", "app.sz.1.x", "app..1", "*.sz.1"} {
		_, err := Parse([]byte("App.S.Obj@tcp -h 127.0.0.1 -p 9000 -s " + set + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), set) {
			t.Errorf("set %q: Parse error %v; want one naming line 1 and the set", set, err)
		}
	}
	if _, err := Parse([]byte("App.S.Obj@tcp -h 127.0.0.1 -p 9000 -s app.sz.1:tcp -h 127.0.0.1 -p 9001 -s app.sz.*\n")); err != nil {
		t.Errorf("well-formed sets refused: %v", err)
	}
}
