package conf_test

import (
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
)

// TestServantTLSMergedChecked: a servant's TLS keys apply merged over the communicator's
// (TLS.Or), as communicator.New builds them: a file whose merged servant TLS cannot be built
// (tls-min-version = "1.3" at the top, tls-ciphers in the servant's table: "TLS 1.3 suites are
// not configurable") is refused at load. It loaded, and failed only in communicator.New.
func TestServantTLSMergedChecked(t *testing.T) {
	data := `tls-min-version = "1.3"
[servant."A.B.C"]
tls-ciphers = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
`
	c, err := conf.Parse([]byte(data))
	if err != nil {
		if !strings.Contains(err.Error(), `servant."A.B.C".tls-ciphers`) {
			t.Errorf("the error does not name the servant's key: %v", err)
		}
		return
	}
	s := c.ForServant("A.B.C")
	_, _, perr := s.TLS.Parse("")
	t.Fatalf("conf.Parse accepted a configuration whose servant TLS, as it applies (ForServant), is invalid (%v)", perr)
}
