package endpoint

import (
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics and that a parsed Target survives its canonical form:
// Parse(t.String()) returns t, and each endpoint survives its own and passes Check. The seed corpus is in
// testdata/fuzz/FuzzParse and runs with every plain go test.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		if err != nil {
			if got.Object != "" || got.Endpoints != nil {
				t.Fatalf("Parse(%q) returned %+v with error %v", s, got, err)
			}
			return
		}
		canon := got.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v; Parse of its String %q: %v", s, got, canon, err)
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("Parse(%q) = %+v; Parse of its String %q = %+v", s, got, canon, again)
		}
		if c := again.String(); c != canon {
			t.Fatalf("String is not stable: %q then %q", canon, c)
		}
		for _, e := range got.Endpoints {
			back, err := ParseEndpoint(e.String())
			if err != nil || back != e {
				t.Fatalf("ParseEndpoint(%q) = %+v, %v; want %+v", e.String(), back, err, e)
			}
			if err := e.Check(); err != nil {
				t.Fatalf("Check of parsed %q: %v", e.String(), err)
			}
		}
	})
}
