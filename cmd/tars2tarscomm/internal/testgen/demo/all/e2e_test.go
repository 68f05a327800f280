package all_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/all"
	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/testgen/demo/base"
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// storeImpl serves Store for these tests; what it does is chosen by the key/err strings.
type storeImpl struct {
	all.UnimplementedStoreServer
	mu      sync.Mutex
	curs    []server.Current // copies of what the handlers saw
	oneways chan all.Item
}

func (s *storeImpl) note(cur *server.Current) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *cur
	c.Context, c.Status = copyMap(cur.Context), copyMap(cur.Status)
	s.curs = append(s.curs, c)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *storeImpl) Put(_ context.Context, cur *server.Current, item all.Item) (int32, int32, error) {
	s.note(cur)
	if cur.PacketType == codec.PacketOneway {
		s.oneways <- item
	}
	switch item.S {
	case "code0":
		return 5, 6, &server.Error{Code: 0, Desc: "failed, with code 0"}
	case "wrapped":
		return 5, 6, fmt.Errorf("wrapping: %w", &server.Error{Code: -77, Desc: "inner"})
	case "plain":
		return 5, 6, errors.New("plain failure")
	}
	return item.I32, item.I32 * 2, nil
}

func (s *storeImpl) Ping(_ context.Context, cur *server.Current) error {
	s.note(cur)
	if cur.Context["fail"] == "code0" {
		return &server.Error{Code: 0, Desc: "ping failed, with code 0"}
	}
	if cur.Context["fail"] == "code1" {
		return &server.Error{Code: 1, Desc: "ping failed, with code 1"}
	}
	cur.ResponseContext = map[string]string{"echo": cur.Context["k"]}
	cur.ResponseStatus = map[string]string{"st": cur.Status["s"]}
	return nil
}

func (s *storeImpl) Find(_ context.Context, cur *server.Current, key string, min base.Level) (bool, all.Item, []string, map[string]int32, error) {
	it := all.NewItem()
	it.S, it.Level, it.I32 = key, min, int32(len(key))
	it.Strs = []string{key, key}
	it.Points = map[int32]base.Point{1: {X: 1, Y: 2, Label: key}}
	return key != "", it, []string{"n:" + key}, map[string]int32{key: int32(len(key)), "z": -1}, nil
}

func (s *storeImpl) Echo(_ context.Context, cur *server.Current, req all.Item) (int32, all.Item, error) {
	s.note(cur)
	return req.I32, req, nil
}

func startStore(t *testing.T, impl *storeImpl) (*all.StoreProxy, *server.Server) {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1), server.WithWorkers(4))
	const obj = "Demo.E2EServer.StoreObj"
	if err := all.RegisterStore(s, obj, impl); err != nil {
		t.Fatal(err)
	}
	return serveStore(t, s, obj), s
}

// serveStore starts s on a loopback port, stopped when t ends, and returns a generated proxy of
// obj bound to it through a Communicator of its own.
func serveStore(t *testing.T, s *server.Server, obj string) *all.StoreProxy {
	t.Helper()
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	comm, err := communicator.New(conf.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	_, port, _ := net.SplitHostPort(addr.String())
	p := new(all.StoreProxy)
	if err := comm.StringToProxy(obj+"@tcp -h 127.0.0.1 -p "+port+" -t 60000", p); err != nil {
		t.Fatal(err)
	}
	return p
}

func storeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A handler that returns a *server.Error (any code) reported a failure: the client does not see a
// success. Before, with Code 0 the server answered iRet 0 with an empty body, so a void function
// "succeeded" and a function with outs failed with a decode error instead of the server's
// description.
func TestServerErrorCodeZero(t *testing.T) {
	impl := &storeImpl{oneways: make(chan all.Item, 8)}
	p, _ := startStore(t, impl)
	ctx := storeCtx(t)

	err := p.Ping(ctx, servantproxy.WithContext(map[string]string{"fail": "code0"}))
	if err == nil {
		t.Errorf("Ping whose handler returned &server.Error{Code: 0, Desc: ...}: nil error; want the handler's failure reported (e.g. a *ServerError, RetUnknown, with its description)")
	}
	item := all.NewItem()
	item.S = "code0"
	ret, cnt, err := p.Put(ctx, item)
	var se *servantproxy.ServerError
	if !errors.As(err, &se) {
		t.Errorf("Put whose handler returned &server.Error{Code: 0}: ret=%d count=%d err=%v; want a *ServerError carrying the handler's description", ret, cnt, err)
	}
}

// Guard: sync, async and future give the same return value and outs (struct, vector,
// map, defaults filled in), and an enum value the client does not know arrives as is.
func TestVariantsAgree(t *testing.T) {
	impl := &storeImpl{oneways: make(chan all.Item, 8)}
	p, _ := startStore(t, impl)
	ctx := storeCtx(t)

	ok, it, notes, sizes, err := p.Find(ctx, "key", base.Level_FATAL)
	if err != nil || !ok {
		t.Fatalf("Find: %v %v", ok, err)
	}
	sync := all.StoreFindResult{Ret: ok, Item: it, Notes: notes, Sizes: sizes}
	type res struct {
		r   all.StoreFindResult
		err error
	}
	ch := make(chan res, 1)
	if err := p.AsyncFind(ctx, "key", base.Level_FATAL, func(ret bool, item all.Item, notes []string, sizes map[string]int32, err error) {
		ch <- res{all.StoreFindResult{Ret: ret, Item: item, Notes: notes, Sizes: sizes}, err}
	}); err != nil {
		t.Fatal(err)
	}
	a := <-ch
	f, ferr := p.FutureFind(ctx, "key", base.Level_FATAL).Get(ctx)
	if a.err != nil || ferr != nil {
		t.Fatalf("async %v future %v", a.err, ferr)
	}
	if !reflect.DeepEqual(sync, a.r) || !reflect.DeepEqual(sync, f) {
		t.Errorf("variants differ:\nsync   %+v\nasync  %+v\nfuture %+v", sync, a.r, f)
	}
	if it.Level != base.Level_FATAL || it.Name != "none" || it.Count != 7 || it.Where.Y != -1 || notes[0] != "n:key" || sizes["z"] != -1 {
		t.Errorf("outs: %+v %v %v", it, notes, sizes)
	}
	// An enum value the client does not know arrives as is.
	_, it, _, _, err = p.Find(ctx, "k", base.Level(99))
	if err != nil || it.Level != 99 {
		t.Errorf("unknown enum: %v %v", it.Level, err)
	}
}

// Guard: context and status go to the server through every generated variant of a tars
// interface (one-way too); the reply's maps come back.
func TestContextStatus(t *testing.T) {
	impl := &storeImpl{oneways: make(chan all.Item, 8)}
	p, _ := startStore(t, impl)
	ctx := storeCtx(t)
	opts := func(rc, rs *map[string]string) []servantproxy.CallOption {
		return []servantproxy.CallOption{
			servantproxy.WithContext(map[string]string{"k": "v"}),
			servantproxy.WithStatus(map[string]string{"s": "t"}),
			servantproxy.WithResponseContext(rc), servantproxy.WithResponseStatus(rs),
		}
	}
	var rc, rs map[string]string
	if err := p.Ping(ctx, opts(&rc, &rs)...); err != nil || rc["echo"] != "v" || rs["st"] != "t" {
		t.Errorf("sync: %v %v %v", err, rc, rs)
	}
	var arc, ars map[string]string
	done := make(chan string, 1)
	if err := p.AsyncPing(ctx, func(err error) { done <- fmt.Sprint(err, arc["echo"], ars["st"]) }, opts(&arc, &ars)...); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "<nil>vt" {
		t.Errorf("async: %s", got)
	}
	var frc, frs map[string]string
	if _, err := p.FuturePing(ctx, opts(&frc, &frs)...).Get(ctx); err != nil || frc["echo"] != "v" || frs["st"] != "t" {
		t.Errorf("future: %v %v %v", err, frc, frs)
	}
	item := all.NewItem()
	item.I32 = 3
	if err := p.OnewayPut(ctx, item, servantproxy.WithContext(map[string]string{"one": "way"})); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-impl.oneways:
		if got.I32 != 3 {
			t.Errorf("oneway item %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("one-way put never ran")
	}
	impl.mu.Lock()
	defer impl.mu.Unlock()
	for _, c := range impl.curs {
		if c.PacketType == codec.PacketOneway {
			if c.Context["one"] != "way" {
				t.Errorf("oneway context %v", c.Context)
			}
			continue
		}
		if c.Context["k"] != "v" || c.Status["s"] != "t" {
			t.Errorf("%s saw context %v status %v", c.Func, c.Context, c.Status)
		}
	}
}

// Guard (meant for -race): many goroutines share one generated tars proxy, all variants.
func TestConcurrentProxy(t *testing.T) {
	impl := &storeImpl{oneways: make(chan all.Item, 1000)}
	p, _ := startStore(t, impl)
	ctx := storeCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				key := fmt.Sprintf("g%d-%d", g, i)
				item := fullItem()
				item.S, item.I32 = key, int32(g*1000+i)
				switch i % 3 {
				case 0:
					ret, rsp, err := p.Echo(ctx, item)
					if err != nil || ret != item.I32 || !reflect.DeepEqual(rsp, item) {
						errs <- fmt.Errorf("Echo %s: %d %v", key, ret, err)
					}
				case 1:
					done := make(chan error, 1)
					if err := p.AsyncEcho(ctx, item, func(ret int32, rsp all.Item, err error) {
						if err == nil && (ret != item.I32 || !reflect.DeepEqual(rsp, item)) {
							err = fmt.Errorf("AsyncEcho %s: got %d %s", key, ret, rsp.S)
						}
						done <- err
					}); err != nil {
						errs <- err
						continue
					}
					if err := <-done; err != nil {
						errs <- err
					}
				case 2:
					r, err := p.FutureEcho(ctx, item).Get(ctx)
					if err != nil || r.Ret != item.I32 || !reflect.DeepEqual(r.Rsp, item) {
						errs <- fmt.Errorf("FutureEcho %s: %d %v", key, r.Ret, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// rawSetup starts a server whose servant answers with hand-made bodies (another version of the
// interface), and binds a generated proxy to it.
func rawSetup(t *testing.T, handlers map[string]server.HandlerFunc) *all.StoreProxy {
	t.Helper()
	s := server.New(server.WithNumEventLoop(1))
	const obj = "Demo.E2EServer.RawObj"
	for fn, h := range handlers {
		if err := s.Handle(obj, fn, h); err != nil {
			t.Fatal(err)
		}
	}
	return serveStore(t, s, obj)
}

// Guard: a newer server (extra fields in the out struct, an extra out parameter) and an older one (an
// out struct without its optional fields) both decode in the generated client.
func TestVersionSkew(t *testing.T) {
	p := rawSetup(t, map[string]server.HandlerFunc{
		"find": func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			e := codec.Encoder{Buf: rsp}
			e.WriteBool(0, true)
			it := all.NewItem()
			it.S = "newer"
			e.WriteStructBegin(3)
			it.Encode(&e)
			e.WriteString(201, "a field added later")
			e.WriteStructBegin(202)
			e.WriteInt32(0, 1)
			e.WriteStructEnd()
			e.WriteStructEnd()
			e.WriteListHead(4, 1)
			e.WriteString(0, "note")
			e.WriteMapHead(5, 0)
			e.WriteString(6, "an out added later")
			return e.Buf, nil
		},
		"echo": func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
			// An older Item: the required fields only.
			e := codec.Encoder{Buf: rsp}
			e.WriteInt32(0, 9)
			e.WriteStructBegin(2)
			writeItemRequired(&e, true, "older", 1)
			e.WriteStructEnd()
			return e.Buf, nil
		},
	})
	ctx := storeCtx(t)
	ok, it, notes, sizes, err := p.Find(ctx, "x", 0)
	if err != nil || !ok || it.S != "newer" || it.Count != 7 || len(notes) != 1 || len(sizes) != 0 {
		t.Errorf("newer server: %v %+v %v %v %v", ok, it, notes, sizes, err)
	}
	ret, rsp, err := p.Echo(ctx, all.NewItem())
	want := all.NewItem()
	want.B, want.I8, want.I16, want.I32, want.I64, want.F32, want.F64 = true, 1, 1, 1, 1, 0, 0
	if err != nil || ret != 9 || rsp.S != "older" || rsp.Name != "none" || rsp.Level != base.Level_WARN || rsp.Where != want.Where || rsp.Big != 4000000000 {
		t.Errorf("older server: %d %+v %v", ret, rsp, err)
	}
}
