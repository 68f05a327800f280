package all_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/all"
	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/base"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/future"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

func fullItem() all.Item {
	return all.Item{
		B: true, I8: -8, I16: -1600, I32: 1 << 20, I64: math.MinInt64, F32: 1.5, F64: -2.25,
		S: strings.Repeat("s", 300), U8: 250, U16: 65000, U32: 4000000001,
		Raw: []byte{0, 1, 255}, Uraw: []uint8{7, 200}, Ints: []int32{1, -1, 0},
		Strs: []string{"", "x"}, Kv: map[string]string{"k": "v"},
		Points:  map[int32]base.Point{3: {X: 1, Y: 2, Label: "p"}},
		Matrix:  [][]int64{{1, 2}, {}, {math.MaxInt64}},
		Groups:  map[string][]base.Point{"g": {{X: 9, Y: -1, Label: "origin"}}},
		Level:   base.Level_FATAL,
		Where:   base.Point{X: 4, Y: 5},
		Flag:    false,
		Count:   0,
		Name:    "",
		Ratio:   0,
		Big:     1,
		Lvl:     base.Level_DEBUG,
		ByPoint: map[base.Point]string{{X: 1}: "one"},
		Far:     -5,
	}
}

func TestRoundTrip(t *testing.T) {
	in := fullItem()
	b := in.MarshalTars(nil)
	var out all.Item
	if err := out.UnmarshalTars(b); err != nil {
		t.Fatal(err)
	}
	// An empty inner vector decodes as an empty, non-nil slice.
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
}

func TestDefaults(t *testing.T) {
	var it all.Item
	it.Reset()
	want := all.Item{Level: base.Level_WARN, Flag: true, Count: 7, Name: "none", Ratio: 0.5, Big: 4000000000,
		Where: base.Point{Y: -1, Label: "origin"}}
	if !reflect.DeepEqual(it, want) {
		t.Fatalf("Reset: %+v, want %+v", it, want)
	}
	if got := all.NewItem(); !reflect.DeepEqual(got, want) {
		t.Fatalf("NewItem: %+v, want %+v", got, want)
	}
	if got := base.NewPoint(); got != want.Where {
		t.Fatalf("NewPoint: %+v, want %+v", got, want.Where)
	}
	// A reset Item writes its required fields, its optional enums and structs, and no optional
	// field equal to its default; decoding that gives the defaults back.
	b := it.MarshalTars(nil)
	var e codec.Encoder
	writeItemRequired(&e, false, "", 0)
	e.WriteInt32(19, int32(base.Level_WARN))
	e.WriteStructBegin(20)
	e.WriteInt32(0, 0)
	e.WriteInt32(1, -1)
	e.WriteStructEnd()
	e.WriteInt32(26, 0)
	if !bytes.Equal(b, e.Buf) {
		t.Fatalf("reset Item encodes as\n% x\nwant\n% x", b, e.Buf)
	}
	var back all.Item
	back.Count = 99
	if err := back.UnmarshalTars(b); err != nil || !reflect.DeepEqual(back, want) {
		t.Fatalf("decoded %+v (%v), want %+v", back, err, want)
	}
	// Fields absent altogether (an old peer) decode as their defaults too.
	var p base.Point
	if err := p.UnmarshalTars([]byte{0x00, 0x05, 0x10, 0x03}); err != nil || p != (base.Point{X: 5, Y: 3, Label: "origin"}) {
		t.Fatalf("Point from x, y only: %+v, %v", p, err)
	}
}

// vector<byte> is a simple list, vector<unsigned byte> a LIST of int16 (what TarsCpp reads),
// unsigned types are written as the next wider integer.
func TestWireTypes(t *testing.T) {
	it := all.Item{Raw: []byte{1}, Uraw: []uint8{200}, U8: 200}
	b := it.MarshalTars(nil)
	d := codec.NewDecoder(b)
	if v, err := d.ReadInt16(8, true); err != nil || v != 200 {
		t.Fatalf("u8 = %d, %v", v, err)
	}
	if _, typ, _ := d.PeekHead(); typ != codec.TypeInt8 && typ != codec.TypeZero {
		t.Fatalf("after u8, type %d", typ)
	}
	if got := bytes.Index(b, []byte{0xbd, 0x00, 0x00, 0x01, 0x01}); got < 0 { // tag 11 simple list of 1 byte
		t.Fatalf("raw is not a simple list: % x", b)
	}
	if got := bytes.Index(b, []byte{0xc9, 0x00, 0x01, 0x01, 0x00, 0xc8}); got < 0 { // tag 12 list of one int16 200
		t.Fatalf("uraw is not a LIST of int16: % x", b)
	}
}

func TestUnknownAndRequired(t *testing.T) {
	// A newer peer's Point with extra fields (tags 3 and 9, one a struct) decodes; a peer's Item
	// missing the required field s is an error naming it.
	var e codec.Encoder
	e.WriteInt32(0, 1)
	e.WriteInt32(1, 2)
	e.WriteStructBegin(3)
	e.WriteString(0, "nested")
	e.WriteStructEnd()
	e.WriteString(9, "later")
	var p base.Point
	if err := p.UnmarshalTars(e.Buf); err != nil || p != (base.Point{X: 1, Y: 2, Label: "origin"}) {
		t.Fatalf("%+v, %v", p, err)
	}
	// Inside a struct field, the unknown fields are skipped up to its end.
	tr := all.Tree{Name: "root", Children: []all.Tree{{Name: "leaf", Marks: map[string]all.Empty{"m": {}}}}}
	var back all.Tree
	if err := back.UnmarshalTars(tr.MarshalTars(nil)); err != nil || !reflect.DeepEqual(back, tr) {
		t.Fatalf("tree: %+v, %v", back, err)
	}
	var it all.Item
	e.Reset(nil)
	e.WriteBool(0, true)
	err := it.UnmarshalTars(e.Buf)
	if !errors.Is(err, codec.ErrRequired) || !strings.Contains(err.Error(), "Demo::All::Item.i8") {
		t.Fatalf("Item without i8: %v", err)
	}
	if err := it.UnmarshalTars([]byte{0x07, 0xff}); !errors.Is(err, codec.ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestEnumsConsts(t *testing.T) {
	if base.Level_ERROR != base.Level_WARN || base.Level_FATAL != 11 || base.Level_INFO != 2 {
		t.Fatal("enum values")
	}
	if base.Level_WARN.String() != "WARN" || base.Level(3).String() != "Level(3)" {
		t.Fatal("enum String")
	}
	if base.MAX_ITEMS != 100 || base.GREETING != `hello "world"` || base.DEFAULT_LEVEL != base.Level_INFO ||
		all.BIG != math.MaxInt64 || all.PI != 3.14159 || !all.YES {
		t.Fatal("constants")
	}
}

// store serves Store; Get is left unimplemented.
type store struct {
	all.UnimplementedStoreServer
	mu    sync.Mutex
	items map[string]all.Item
	pings chan struct{}
}

func (s *store) Put(_ context.Context, _ *server.Current, item all.Item) (int32, int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[item.S] = item
	return 0, int32(len(s.items)), nil
}

func (s *store) Ping(context.Context, *server.Current) error {
	s.pings <- struct{}{}
	return nil
}

func (s *store) Find(_ context.Context, _ *server.Current, key string, min base.Level) (bool, all.Item, []string, map[string]int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[key]
	if !ok || it.Level < min {
		return false, all.Item{}, nil, nil, nil // out parameters are still written, empty
	}
	return true, it, []string{"found " + key}, map[string]int32{key: int32(len(key))}, nil
}

func (s *store) Tricky(_ context.Context, _ *server.Current, ctx int32, err string, ret int64, opts int32, cb string, a bool, e, d, r, p int32, typ string) (string, int32, error) {
	if err == "fail" {
		return "", 0, &server.Error{Code: 42, Desc: "asked to fail"}
	}
	return typ + cb + err, ctx + opts + e + d + r + p + int32(ret), nil
}

func (s *store) Echo(_ context.Context, _ *server.Current, req all.Item) (int32, all.Item, error) {
	return 1, req, nil
}

func TestProxyAndServer(t *testing.T) {
	s := server.New(server.WithNumEventLoop(1), server.WithWorkers(2))
	impl := &store{items: map[string]all.Item{}, pings: make(chan struct{}, 4)}
	const obj = "Demo.StoreServer.StoreObj"
	if err := all.RegisterStore(s, obj, impl); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	comm, err := communicator.New(conf.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) }()
	_, port, _ := net.SplitHostPort(addr.String())
	p := new(all.StoreProxy)
	if err := comm.StringToProxy(obj+"@tcp -h 127.0.0.1 -p "+port, p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	item := fullItem()
	item.S = "k1"
	if ret, n, err := p.Put(ctx, item); ret != 0 || n != 1 || err != nil {
		t.Fatalf("Put = %d, %d, %v", ret, n, err)
	}
	ok, got, notes, sizes, err := p.Find(ctx, "k1", base.Level_WARN)
	if err != nil || !ok || !reflect.DeepEqual(got, item) || !reflect.DeepEqual(notes, []string{"found k1"}) || sizes["k1"] != 2 {
		t.Fatalf("Find = %v, %+v, %v, %v, %v", ok, got, notes, sizes, err)
	}
	// Not found: every out parameter still arrives (reset), no decode error.
	if ok, got, notes, _, err := p.Find(ctx, "nope", 0); err != nil || ok || len(notes) != 0 || got.S != "" {
		t.Fatalf("Find(nope) = %v, %+v, %v, %v", ok, got, notes, err)
	}
	if s, b, err := p.Tricky(ctx, 1, "e", 2, 3, "cb", true, 4, 5, 6, 7, "type", servantproxy.WithTimeout(5*time.Second)); s != "typecbe" || b != 28 || err != nil {
		t.Fatalf("Tricky = %q, %d, %v", s, b, err)
	}
	tf := p.FutureTricky(ctx, 1, "e", 2, 3, "cb", true, 4, 5, 6, 7, "type")
	if r, err := tf.Get(ctx); r.Ret != "typecbe" || r.B != 28 || err != nil {
		t.Fatalf("FutureTricky = %+v, %v", r, err)
	}
	tricky := make(chan string, 1)
	if err := p.AsyncTricky(ctx, 1, "e", 2, 3, "cb", true, 4, 5, 6, 7, "type", func(ret string, b int32, err error) {
		tricky <- fmt.Sprint(ret, b, err)
	}); err != nil {
		t.Fatal(err)
	}
	if got := <-tricky; got != "typecbe28 <nil>" {
		t.Fatalf("AsyncTricky called back with %s", got)
	}
	if ret, rsp, err := p.Echo(ctx, item); ret != 1 || !reflect.DeepEqual(rsp, item) || err != nil {
		t.Fatalf("Echo = %d, %+v, %v", ret, rsp, err)
	}
	var se *servantproxy.ServerError
	if _, _, err := p.Tricky(ctx, 0, "fail", 0, 0, "", false, 0, 0, 0, 0, ""); !errors.As(err, &se) || se.Code != 42 {
		t.Fatalf("Tricky(fail): %v", err)
	}
	if _, err := p.Get(ctx, "k1"); !errors.As(err, &se) || se.Code != codec.RetNoFunc {
		t.Fatalf("unimplemented Get: %v, want RetNoFunc", err)
	}
	// Undecodable parameters: -1; unknown function: -3 (from the server).
	if _, err := p.ServantProxy().InvokeRaw(ctx, "put", []byte{0x1a}); !errors.As(err, &se) || se.Code != codec.RetServerDecode {
		t.Fatalf("garbage body: %v, want RetServerDecode", err)
	}
	if _, err := p.ServantProxy().InvokeRaw(ctx, "nosuch", nil); !errors.As(err, &se) || se.Code != codec.RetNoFunc {
		t.Fatalf("unknown function: %v, want RetNoFunc", err)
	}

	// Async: the typed callback, once.
	done := make(chan error, 1)
	if err := p.AsyncFind(ctx, "k1", 0, func(ok bool, it all.Item, notes []string, sizes map[string]int32, err error) {
		if err == nil && (!ok || it.S != "k1") {
			err = errors.New("wrong async reply")
		}
		done <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := p.AsyncPing(ctx, nil); err == nil {
		t.Fatal("AsyncPing with a nil callback accepted")
	}

	// Futures: of a value, of a void function, of a result struct; joined.
	f1 := p.FutureFind(ctx, "k1", 0)
	f2 := p.FuturePing(ctx)
	f3 := p.FutureGet(ctx, "k1")
	if err := future.Join(ctx, f1, f2); err != nil {
		t.Fatal(err)
	}
	if r, err := f1.Get(ctx); err != nil || !r.Ret || r.Item.S != "k1" {
		t.Fatalf("FutureFind = %+v, %v", r, err)
	}
	if _, err := f3.Get(ctx); !errors.As(err, &se) || se.Code != codec.RetNoFunc {
		t.Fatalf("FutureGet: %v", err)
	}
	<-impl.pings

	// One-way: the server runs it.
	if err := p.OnewayPing(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-impl.pings:
	case <-time.After(10 * time.Second):
		t.Fatal("one-way ping never ran")
	}
	// An unbound proxy fails, future included.
	var unbound all.StoreProxy
	if _, err := unbound.FuturePing(ctx).Get(ctx); err == nil {
		t.Fatal("unbound proxy's future succeeded")
	}
}

// writeItemRequired writes the required fields of an Item (tags 0 to 10) to e: b at tag 0, s at
// tag 7, zero floats at 5 and 6, and n at each other tag.
func writeItemRequired(e *codec.Encoder, b bool, s string, n int64) {
	e.WriteBool(0, b)
	for tag := byte(1); tag <= 10; tag++ {
		switch tag {
		case 5:
			e.WriteFloat32(5, 0)
		case 6:
			e.WriteFloat64(6, 0)
		case 7:
			e.WriteString(7, s)
		default:
			e.WriteInt64(tag, n)
		}
	}
}
