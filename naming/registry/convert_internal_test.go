package registry

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
)

// TestConvertSkipsWhatItsStringCannotCarry: an endpoint the registry lists with a field its
// string form cannot carry is left out (with the one warning), so that what the client dials is
// what it caches and shows. Before the fix the host "127.0.0.1 -p 9" was kept: dialled as that
// host (and failing), and cached as "tcp -h 127.0.0.1 -p 9 -p 80", which reads back as another
// endpoint; the others were cached as strings that do not read back at all.
func TestConvertSkipsWhatItsStringCannotCarry(t *testing.T) {
	good := endpointf.EndpointF{Host: "127.0.0.1", Port: 80, Istcp: 1, Timeout: 3000, SetId: "app.sz.1"}
	with := func(edit func(*endpointf.EndpointF)) endpointf.EndpointF { f := good; edit(&f); return f }
	negWeight := with(func(f *endpointf.EndpointF) { f.Port, f.Weight, f.WeightType = 81, -3, 1 })
	in := []endpointf.EndpointF{
		good,
		with(func(f *endpointf.EndpointF) { f.Host = "127.0.0.1 -p 9" }),
		with(func(f *endpointf.EndpointF) { f.Host = "-x" }),
		with(func(f *endpointf.EndpointF) { f.Host = "a:tcp" }),
		with(func(f *endpointf.EndpointF) { f.Timeout = -5 }),
		with(func(f *endpointf.EndpointF) { f.Grid = -1 }),
		with(func(f *endpointf.EndpointF) { f.Qos = -1 }),
		with(func(f *endpointf.EndpointF) { f.AuthType = 7 }),
		with(func(f *endpointf.EndpointF) { f.SetId = "a.b:c" }),
		with(func(f *endpointf.EndpointF) { f.SetId = "a b" }),
		with(func(f *endpointf.EndpointF) { f.SetId = "\x86" }), // JSON would cache it as "\ufffd"
		with(func(f *endpointf.EndpointF) { f.Host = "h\xff" }),
		negWeight, // kept: a negative weight means none, as weight 0 does without -v 1
	}
	core, logs := observer.New(zap.WarnLevel)
	r := New(nil, Options{Log: zap.New(core)})
	got := r.convert(naming.Query{Object: "A.B.C"}, in)
	want := []endpoint.Endpoint{
		{Proto: endpoint.TCP, Host: "127.0.0.1", Port: 80, Timeout: 3000 * 1e6, Weight: -1, SetDivision: "app.sz.1"},
		{Proto: endpoint.TCP, Host: "127.0.0.1", Port: 81, Timeout: 3000 * 1e6, Weight: -1, WeightType: 1, SetDivision: "app.sz.1"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("convert kept %v, want %v", got, want)
	}
	warned := 0
	for _, l := range logs.All() {
		if strings.Contains(l.Message, "no usable address") {
			warned++
		}
	}
	if warned != 1 {
		t.Fatalf("%d warnings, want 1: %v", warned, logs.All())
	}
}

// FuzzEndpointF: whatever fields a registry sends, an endpoint the client keeps passes Check
// and comes back from the endpoint cache as itself.
func FuzzEndpointF(f *testing.F) {
	f.Add("127.0.0.1", int32(80), int32(1), int32(3000), int32(0), int32(0), int32(0), int32(0), int32(0), "")
	f.Add("127.0.0.1 -p 9", int32(80), int32(1), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), "")
	f.Add("fe80::1", int32(1), int32(2), int32(-5), int32(-1), int32(-1), int32(-3), int32(1), int32(7), "a.b:c")
	f.Add("h", int32(65535), int32(0), int32(1), int32(2), int32(3), int32(4), int32(1), int32(1), "x.y.z")
	f.Fuzz(func(t *testing.T, host string, port, istcp, timeout, grid, qos, weight, weightType, auth int32, set string) {
		in := endpointf.EndpointF{Host: host, Port: port, Istcp: istcp, Timeout: timeout, Grid: grid, Qos: qos,
			Weight: weight, WeightType: weightType, AuthType: auth, SetId: set}
		e, verdict := usable(in)
		if verdict != use {
			return
		}
		if e != FromEndpointF(in) {
			t.Fatalf("usable converted %+v to %+v, FromEndpointF to %+v", in, e, FromEndpointF(in))
		}
		if err := e.Check(); err != nil {
			t.Fatalf("kept %+v: Check: %v", in, err)
		}
		c := newCache(filepath.Join(t.TempDir(), "cache.json"), "Q@tcp -h a -p 1")
		l := naming.List{Active: []endpoint.Endpoint{e}}
		if err := c.store(naming.Query{Object: "A"}, l); err != nil {
			t.Fatal(err)
		}
		back, ok := newCache(c.path, "Q@tcp -h a -p 1").load(naming.Query{Object: "A"})
		if !ok || !back.Equal(l) {
			t.Fatalf("kept %+v as %q: the cache gave back %v (found %v)", in, e.String(), back, ok)
		}
	})
}
