package conf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSecretRoundTrip: a Secret decodes from TOML as written, shows masked in every printed and
// encoded form, and a masked one read back is refused instead of taken for the secret.
func TestSecretRoundTrip(t *testing.T) {
	c, err := Parse([]byte("accesskey = \"app\"\nsecretkey = \"s3cr3t\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Auth.SecretKey) != "s3cr3t" {
		t.Fatalf("decoded secret %q; want s3cr3t", string(c.Auth.SecretKey))
	}
	b, err := json.Marshal(c.Auth)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(b), fmt.Sprintf("%v %+v %#v %s %q", c.Auth, c.Auth, c.Auth, c.Auth.SecretKey, c.Auth.SecretKey)} {
		if strings.Contains(text, "s3cr3t") {
			t.Errorf("the secret shows in %s", text)
		}
	}
	var back Auth
	if err := json.Unmarshal(b, &back); err == nil {
		t.Errorf("a masked secret read back: %q, no error; want it refused", string(back.SecretKey))
	}
	if _, err := Parse([]byte("secretkey = \"(set, not shown)\"\n")); err == nil {
		t.Error("a configuration file holding the mask parsed; want an error")
	}
}
