package debugpage_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/debugpage"
)

// TestSecretsNestedConfigMasked: the page masks the values of keys that look like secrets
// (secretkey) when Options.Config is a conf.Config or a pointer to one. A program's own
// configuration commonly holds the communicator's as a pointer, or in a map of pointers; the page
// shows such a struct key by key too, but prints a pointer field with fmt.Sprint: "&{... {app
// TopSecretValue} }", the secret in clear on the HTML page and in its JSON. Before, it did;
// flatten now follows pointers and interfaces.
func TestSecretsNestedConfigMasked(t *testing.T) {
	const secret = "TopSecretValue"
	cfg := conf.Default()
	cfg.Auth = conf.Auth{AccessKey: "app", SecretKey: secret}
	type appConfig struct {
		Name string       `toml:"name"`
		Tars *conf.Config `toml:"tars"`
	}
	type appConfigs struct {
		Tars map[string]*conf.Config `toml:"tars"`
	}
	cases := map[string]any{
		"pointer field":   appConfig{Name: "app", Tars: &cfg},
		"map of pointers": appConfigs{Tars: map[string]*conf.Config{"main": &cfg}},
		"pointer to Auth": struct {
			A *conf.Auth `toml:"auth"`
		}{&cfg.Auth},
		"conf.Config (value)": cfg, // the control case
	}
	for name, c := range cases {
		h := debugpage.Handler(snapshot, debugpage.Options{Config: c})
		for _, url := range []string{"/debug/tarscomm/", "/debug/tarscomm/?format=json"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
			body, _ := io.ReadAll(rec.Result().Body)
			for line := range strings.SplitSeq(string(body), "\n") {
				if strings.Contains(line, secret) {
					t.Errorf("%s, %s: the page shows the secret key in clear: %q; want it masked as for conf.Config", name, url, strings.TrimSpace(line))
					break
				}
			}
		}
	}
}
