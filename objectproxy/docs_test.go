package objectproxy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/objectproxy"
)

// TestDocsListEveryBalancer keeps the docs' balancer lists on the registry: the README, the
// architecture notes and the changelog name every registered balancer, and this package's
// documentation describes each.
func TestDocsListEveryBalancer(t *testing.T) {
	names, _ := objectproxy.Balancers()
	for _, f := range []string{"../README.md", "../docs/ARCHITECTURE.md", "../CHANGELOG.md", "doc.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Join(strings.Fields(string(b)), " ") // lines wrapped anywhere
		for _, n := range names {
			want := "`" + n + "`"
			if f == "doc.go" {
				want = "// - " + n + " ("
			}
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not list the balancer %q (%s)", f, n, want)
			}
		}
	}
}
