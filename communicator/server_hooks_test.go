package communicator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/dye"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/stats"
)

// TestDyeingFollowsTheCallChain dyes a call to a server whose handler calls a second server with
// the ctx it was given: the first handler sees the key in Current, the second server receives
// the call dyed with the same key. The first server also runs an interceptor and counts its
// requests (WithStats).
func TestDyeingFollowsTheCallChain(t *testing.T) {
	seen := make(chan *server.Current, 4)
	back := startGreeter(t, "back", serverOpt{seen: seen})
	comm := newComm(t, nil)
	backPrx := proxyTo(t, comm, back)

	var mu sync.Mutex
	var infos []interceptor.ServerInfo
	front := server.New(server.WithLogger(zaptest.NewLogger(t).Named("front")), server.WithStats(),
		server.WithInterceptor(func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
			err := next(ctx, info)
			mu.Lock()
			infos = append(infos, *info)
			mu.Unlock()
			return err
		}))
	frontSeen := make(chan server.Current, 4)
	err := server.HandleProto(front, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		frontSeen <- *cur
		rsp := new(hellopb.HelloReply)
		if err := backPrx.Invoke(ctx, "SayHello", req, rsp); err != nil {
			return nil, err
		}
		return rsp, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := front.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopServer(t, "front server", front) })
	var frontPrx servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+tcpEndpoint(addr.String()), &frontPrx); err != nil {
		t.Fatal(err)
	}

	ctx := dye.WithKey(testCtx(t), "trace-me")
	rsp := new(hellopb.HelloReply)
	if err := frontPrx.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "chain", Seq: 1}, rsp); err != nil {
		t.Fatal(err)
	}
	cur := <-frontSeen
	if !cur.Dyed || cur.DyeingKey != "trace-me" {
		t.Errorf("front handler: Dyed %v, DyeingKey %q; want the caller's key", cur.Dyed, cur.DyeingKey)
	}
	remote := cur.RemoteAddr.String()
	select {
	case cur := <-seen:
		if key, ok := dye.FromRequest(cur.MessageType, cur.Status); !ok || key != "trace-me" {
			t.Errorf("back server received dyed=%v key=%q, want the key carried on", ok, key)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the back server saw no call")
	}
	// An undyed call stays undyed down the chain.
	if err := frontPrx.Invoke(testCtx(t), "SayHello", &hellopb.HelloRequest{Name: "plain", Seq: 2}, rsp); err != nil {
		t.Fatal(err)
	}
	if cur := <-frontSeen; cur.Dyed {
		t.Errorf("an undyed call arrived dyed")
	}
	if cur := <-seen; cur.MessageType&dye.MessageType != 0 {
		t.Errorf("the back call of an undyed request is dyed")
	}

	mu.Lock()
	if len(infos) != 2 || infos[0].Function != "SayHello" || infos[0].Ret != 0 || infos[0].LocalAddr != addr.String() ||
		infos[0].RemoteAddr != remote || infos[1].RemoteAddr != remote {
		t.Errorf("server interceptor saw %+v; want remote %s, the handler's Current.RemoteAddr", infos, remote)
	}
	mu.Unlock()
	st := front.Stats()
	var ok uint64
	for _, c := range st.Calls {
		if c.Function == "SayHello" && c.Endpoint == addr.String() {
			ok += c.Results[stats.OK]
		}
	}
	if ok != 2 {
		t.Errorf("server stats: %d SayHello successes on %s, want 2 (%+v)", ok, addr, st.Calls)
	}
}
