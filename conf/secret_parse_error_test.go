package conf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
)

// TestSecretParseErrorHidesSecretKey: a secretkey written without quotes (as TarsCpp's
// own config files write it: "secretkey=..." has no quotes there) is a TOML syntax error, and
// the error conf.Load/Parse returns is what a program prints when it cannot start (log.Fatal).
// That error must name the key and the line, never the value: the value is the secret. Before,
// the toml package's "expected value but found %q instead" was passed through, secret and all,
// for the communicator's, a servant's and a server adapter's secretkey.
func TestSecretParseErrorHidesSecretKey(t *testing.T) {
	const secret = "TopSecretValue"
	cases := map[string]string{
		"top level": "accesskey = \"app\"\nsecretkey = " + secret + "\n",
		"servant":   "[servant.\"A.B.Obj\"]\naccesskey = \"app\"\nsecretkey = " + secret + "\n",
		"adapter": "[[server.adapter]]\nservant = \"A.B.Obj\"\nendpoint = \"tcp -h 127.0.0.1 -p 1 -e 1\"\n" +
			"accesskey = \"app\"\nsecretkey = " + secret + "\n",
	}
	for name, text := range cases {
		_, err := conf.Parse([]byte(text))
		if err == nil {
			t.Errorf("%s: Parse accepted an unquoted secretkey", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: conf.Parse error prints the secret key's value: %q; want the key and line named, the value left out", name, err)
		}
		path := filepath.Join(t.TempDir(), "client.toml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := conf.Load(path); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: conf.Load error = %v; want an error that does not print the secret key's value", name, err)
		}
	}
}
