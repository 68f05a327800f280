package registry

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
)

// TestDefaults: zero Options take TarsCpp's intervals.
func TestDefaults(t *testing.T) {
	r := New(nil, Options{})
	want := Options{Refresh: 60 * time.Second, FailRetry: 2 * time.Second, SlowFailRetry: 30 * time.Second,
		EmptyRetry: 10 * time.Second, QueryTimeout: 5 * time.Second}
	got := r.opts
	got.Log = nil
	if got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	r = New(nil, Options{Refresh: time.Second, FailRetry: -1})
	if r.opts.Refresh != time.Second || r.opts.FailRetry != 2*time.Second {
		t.Fatalf("Refresh 1s, FailRetry -1 became %v, %v; want 1s, 2s", r.opts.Refresh, r.opts.FailRetry)
	}
}

// TestSchedule is TarsCpp's retry schedule: the wait after each outcome.
func TestSchedule(t *testing.T) {
	o := Options{Refresh: 1 * time.Minute, FailRetry: 2 * time.Second, SlowFailRetry: 30 * time.Second, EmptyRetry: 10 * time.Second}
	tests := []struct {
		name    string
		outcome int
		fails   int
		want    time.Duration
	}{
		{"answer", answered, 0, time.Minute},
		{"empty active list", empty, 0, 10 * time.Second},
		{"first failure", failed, 1, 2 * time.Second},
		{"second failure", failed, 2, 2 * time.Second},
		{"third failure", failed, 3, 2 * time.Second},
		{"fourth failure: slow", failed, 4, 30 * time.Second},
		{"hundredth failure", failed, 100, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := o.wait(tt.outcome, tt.fails); got != tt.want {
			t.Errorf("%s: wait = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestUsable: which registry endpoints are called.
func TestUsable(t *testing.T) {
	tests := []struct {
		name string
		f    endpointf.EndpointF
		want int
	}{
		{"tcp", endpointf.EndpointF{Host: "h", Port: 1, Istcp: 1}, use},
		{"ssl", endpointf.EndpointF{Host: "h", Port: 65535, Istcp: 2}, use},
		{"udp", endpointf.EndpointF{Host: "h", Port: 1, Istcp: 0}, use},
		{"negative transport", endpointf.EndpointF{Host: "h", Port: 1, Istcp: -1}, skipBad},
		{"unknown transport", endpointf.EndpointF{Host: "h", Port: 1, Istcp: 3}, skipBad},
		{"no host", endpointf.EndpointF{Port: 1, Istcp: 1}, skipBad},
		{"port 0", endpointf.EndpointF{Host: "h", Istcp: 1}, skipBad},
		{"negative port", endpointf.EndpointF{Host: "h", Port: -1, Istcp: 2}, skipBad},
		{"port too big", endpointf.EndpointF{Host: "h", Port: 65536, Istcp: 1}, skipBad},
	}
	for _, tt := range tests {
		if _, got := usable(tt.f); got != tt.want {
			t.Errorf("%s: usable = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestEndpointFRoundTrip: FromEndpointF and ToEndpointF are inverses on what the registry sends.
func TestEndpointFRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		s    string
	}{
		{"tcp", "tcp -h 10.0.0.1 -p 9000 -t 60000"},
		{"ssl", "ssl -h 10.0.0.1 -p 9443"},
		{"udp", "udp -h 10.0.0.1 -p 53"},
		{"options", "tcp -h h -p 1 -t 3000 -g 2 -q 4 -w 7 -v 1 -e 1 -s app.sz.1"},
		{"zero static weight", "tcp -h h -p 1 -w 0 -v 1"},
	}
	for _, tt := range tests {
		e, err := endpoint.ParseEndpoint(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		f := ToEndpointF(e)
		if back := FromEndpointF(f); back != e {
			t.Errorf("%s: FromEndpointF(ToEndpointF(%v)) = %v", tt.name, e, back)
		}
	}
	// A weight of 0 from the registry on a loop-weighted endpoint is "absent".
	if e := FromEndpointF(endpointf.EndpointF{Host: "h", Port: 1, Istcp: 1}); e.Weight != -1 {
		t.Errorf("weight 0, weight type 0: Weight = %d, want -1", e.Weight)
	}
	if f := ToEndpointF(endpoint.Endpoint{Proto: endpoint.SSL, Host: "h", Port: 1, Weight: -1}); f.Istcp != 2 {
		t.Errorf("ssl: istcp %d, want 2", f.Istcp)
	}
}

// TestCache: entries are keyed by the locator (its endpoints in any order), object and set.
func TestCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.json")
	loc := "Q@tcp -h a -p 1:tcp -h b -p 2"
	c := newCache(path, loc)
	l := naming.List{Active: []endpoint.Endpoint{{Proto: endpoint.SSL, Host: "h", Port: 3, Weight: -1}}}
	if err := c.store(naming.Query{Object: "A"}, l); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		locator string
		q       naming.Query
		found   bool
	}{
		{"same locator", loc, naming.Query{Object: "A"}, true},
		{"locator endpoints reordered", "Q@tcp -h b -p 2:tcp -h a -p 1", naming.Query{Object: "A"}, true},
		{"other locator", "Q@tcp -h c -p 1", naming.Query{Object: "A"}, false},
		{"other object", loc, naming.Query{Object: "B"}, false},
		{"with a set", loc, naming.Query{Object: "A", Set: "a.b.c"}, false},
	}
	for _, tt := range tests {
		got, ok := newCache(path, tt.locator).load(tt.q) // a new reader of the file
		if ok != tt.found || (ok && !got.Equal(l)) {
			t.Errorf("%s: load = %v, %v; want found %v", tt.name, got, ok, tt.found)
		}
	}
}
