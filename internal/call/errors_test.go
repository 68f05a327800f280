package call

import (
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestServerErrorText: a TARS return code is named, an application's own code is not (before,
// "server returned 1001 (return code 1001)" said the code twice), and the server that answered is
// named when known.
func TestServerErrorText(t *testing.T) {
	for _, c := range []struct {
		err  ServerError
		want string
	}{
		{ServerError{Code: codec.RetNoFunc}, "tarscomm: server returned -3 (no such function)"},
		{ServerError{Code: codec.RetNoFunc, Desc: "no greet"}, "tarscomm: server returned -3 (no such function): no greet"},
		{ServerError{Code: 1001, Desc: "empty sku"}, "tarscomm: server returned 1001: empty sku"},
		{ServerError{Code: 1001}, "tarscomm: server returned 1001"},
		{ServerError{Code: 1001, Desc: "empty sku", Endpoint: "10.0.0.7:18601"}, "tarscomm: server 10.0.0.7:18601 returned 1001: empty sku"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.err, got, c.want)
		}
	}
}
