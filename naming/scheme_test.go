package naming_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// closingSource is a Static source that records its Close.
type closingSource struct {
	naming.Static
	closed *int
}

func (s closingSource) Close() error { *s.closed++; return nil }

// TestSchemeRegistry: a scheme registered by the test is built from its target (the builder
// sees the scheme in lower case, the rest untouched, and the Env), its source is closed by
// naming.Close; an unknown scheme is ErrUnknownScheme naming the registered ones.
func TestSchemeRegistry(t *testing.T) {
	var got naming.Target
	var gotRefresh bool
	closed := 0
	naming.Register("Test-Scheme", func(tg naming.Target, env naming.Env) (naming.Source, error) {
		got, gotRefresh = tg, env.Refresh == 7
		if tg.Rest == "fail" {
			return nil, errors.New("no such thing")
		}
		return closingSource{naming.Static{Active: eps(1)}, &closed}, nil
	})
	if !slices.Contains(naming.Schemes(), "test-scheme") {
		t.Fatalf("Schemes() = %v, want test-scheme in it", naming.Schemes())
	}
	src, err := naming.Build("TEST-scheme://Host:1/Path?a=b", naming.Env{Refresh: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got != (naming.Target{Scheme: "test-scheme", Rest: "Host:1/Path?a=b"}) || !gotRefresh {
		t.Fatalf("builder got %+v (env passed: %v)", got, gotRefresh)
	}
	var l naming.List
	src.Watch(naming.Query{Object: "A"}, func(x naming.List) { l = x })()
	if len(l.Active) != 1 || l.Active[0].Port != 1 {
		t.Fatalf("built source pushed %v", l)
	}
	if err := naming.Close(src); err != nil || closed != 1 {
		t.Fatalf("Close: %v, closed %d times", err, closed)
	}
	if err := naming.Close(naming.Static{}); err != nil {
		t.Fatalf("Close of a source without Close: %v", err)
	}

	if _, err := naming.Build("test-scheme://fail", naming.Env{}); err == nil || !strings.Contains(err.Error(), "no such thing") || !strings.Contains(err.Error(), "test-scheme://fail") {
		t.Fatalf("a failing builder: %v", err)
	}

	_, err = naming.Build("consul://127.0.0.1:8500", naming.Env{})
	if !errors.Is(err, naming.ErrUnknownScheme) {
		t.Fatalf("unknown scheme: %v, want ErrUnknownScheme", err)
	}
	for _, want := range []string{`"consul"`, "registered: ", "test-scheme"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unknown scheme error %q does not say %q", err, want)
		}
	}
	_, err = naming.Build("etcd://127.0.0.1:2379/tars", naming.Env{})
	if !errors.Is(err, naming.ErrUnknownScheme) || !strings.Contains(err.Error(), `import _ "github.com/tarscomm/tarscomm/etcd"`) {
		t.Fatalf("etcd without its module: %v, want ErrUnknownScheme with the import hint", err)
	}

	for _, bad := range []string{"127.0.0.1:2379", "://x", "1x://y", "e tcd://x", ""} {
		if _, err := naming.Build(bad, naming.Env{}); err == nil || errors.Is(err, naming.ErrUnknownScheme) {
			t.Errorf("Build(%q) = %v, want a syntax error", bad, err)
		}
	}
}

// TestSelectSet: the TARS registry's findObjectByIdInSameSet rules.
func TestSelectSet(t *testing.T) {
	mk := func(port int, set string) endpoint.Endpoint {
		return endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: port, Weight: -1, SetDivision: set}
	}
	all := []endpoint.Endpoint{mk(1, "app.sz.1"), mk(2, "app.sz.2"), mk(3, "app.sh.1"), mk(4, ""), mk(5, "other.sz.1"), mk(6, "bad"),
		mk(7, "app.gz.*"), mk(8, "app.gz.1")}
	for _, tc := range []struct {
		set   string
		ports []int
	}{
		{"", []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{"app.sz.1", []int{1}},
		{"app.sz.*", []int{1, 2}},
		{"app.sh.*", []int{3}},
		{"app.sz.3", nil},
		{"other.sz.1", []int{5}},
		{"app.gz.1", []int{8}},                       // the exact set first
		{"app.gz.2", []int{7}},                       // none in it: the area's wildcard group
		{"app.gz.*", []int{7, 8}},                    // every group of the area
		{"nope.sz.1", []int{1, 2, 3, 4, 5, 6, 7, 8}}, // no endpoint with that set name: set not used
		{"app.sz", []int{1, 2, 3, 4, 5, 6, 7, 8}},    // not a set
	} {
		var ports []int
		for _, e := range naming.SelectSet(all, tc.set) {
			ports = append(ports, e.Port)
		}
		if !slices.Equal(ports, tc.ports) {
			t.Errorf("set %q: ports %v, want %v", tc.set, ports, tc.ports)
		}
	}
}
