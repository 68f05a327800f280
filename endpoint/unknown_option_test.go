package endpoint

import (
	"errors"
	"strings"
	"testing"
)

// TestEndpointUnknownOptionRefused: a one-letter option the grammar does not know is refused,
// naming it ("-T 3000" meant as -t must not leave a server adapter's idle timeout at its default
// in silence); TarsGo's -b stays accepted. Before, such options were dropped without a word.
func TestEndpointUnknownOptionRefused(t *testing.T) {
	for _, tc := range []struct{ in, opt string }{
		{"tcp -h 127.0.0.1 -p 1 -x 5", "-x"},
		{"tcp -h 127.0.0.1 -p 10000 -T 3000", "-T"},
		{"tcp -h 127.0.0.1 -p 10000 -r", "-r"},
	} {
		e, err := ParseEndpoint(tc.in)
		var se *SyntaxError
		if err == nil || !errors.As(err, &se) || !strings.Contains(se.Msg, `"`+tc.opt+`"`) {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want a *SyntaxError naming the unknown option %q "+
				"(dropping it silently turns a typo into a different endpoint: %q)", tc.in, e, err, tc.opt, e.String())
		}
	}
}
