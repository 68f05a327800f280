package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tarscomm/tarscomm/interceptor"
)

type key struct{}

func TestChainClientOrderMapsAndEnd(t *testing.T) {
	var trail []string
	mk := func(name string) interceptor.Client {
		return func(ctx context.Context, info *interceptor.CallInfo, next interceptor.ClientInvoker) error {
			trail = append(trail, "in "+name)
			info.SetContext("by", info.Context["by"]+name)
			info.OnEnd(func(i *interceptor.CallInfo) { trail = append(trail, "end "+name+" "+i.Err.Error()) })
			return next(context.WithValue(ctx, key{}, name), info)
		}
	}
	chain := interceptor.ChainClient(mk("a"), mk("b"), mk("c"))
	callerMap := map[string]string{"user": "1"}
	info := &interceptor.CallInfo{Servant: "S", Function: "f", Context: callerMap}
	boom := errors.New("boom")
	err := chain(context.Background(), info, func(ctx context.Context, info *interceptor.CallInfo) error {
		if ctx.Value(key{}) != "c" {
			t.Errorf("the innermost ctx is %v", ctx.Value(key{}))
		}
		info.Endpoint = "h:1"
		info.End(boom) // what the communicator does when the call ends
		return boom
	})
	if err != boom {
		t.Fatalf("err %v", err)
	}
	if got := strings.Join(trail, ","); got != "in a,in b,in c,end c boom,end b boom,end a boom" {
		t.Errorf("order %s", got)
	}
	if info.Context["by"] != "abc" || info.Context["user"] != "1" || len(callerMap) != 1 {
		t.Errorf("maps: info %v caller %v", info.Context, callerMap)
	}
	info.SetStatus("k", "v")
	if info.Status["k"] != "v" {
		t.Error("SetStatus on a nil map")
	}
	if interceptor.ChainClient() != nil || interceptor.ChainServer() != nil {
		t.Error("an empty chain is not nil")
	}
}

func TestChainServer(t *testing.T) {
	var trail []string
	mk := func(name string) interceptor.Server {
		return func(ctx context.Context, info *interceptor.ServerInfo, next interceptor.ServerHandler) error {
			trail = append(trail, name)
			err := next(context.WithValue(ctx, key{}, name), info)
			trail = append(trail, name+" ret "+string(rune('0'-info.Ret)))
			return err
		}
	}
	chain := interceptor.ChainServer(mk("a"), mk("b"))
	err := chain(context.Background(), &interceptor.ServerInfo{Servant: "S"}, func(ctx context.Context, info *interceptor.ServerInfo) error {
		trail = append(trail, "handler "+ctx.Value(key{}).(string))
		info.Ret = -3 // as the server's next does: the code of the error returned
		return codeErr(-3)
	})
	if !errors.Is(err, codeErr(-3)) || strings.Join(trail, ",") != "a,b,handler b,b ret 3,a ret 3" {
		t.Errorf("err %v trail %v", err, trail)
	}
}

// codeErr is an error carrying a TARS return code, as server.Error does.
type codeErr int32

func (e codeErr) Error() string   { return "code " + strconv.Itoa(int(e)) }
func (e codeErr) TARSCode() int32 { return int32(e) }

// TestRetOf: the code a server answers an error with: 0 for nil, the code of an error carrying
// one (wrapped too), -99 for any other.
func TestRetOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int32
	}{
		{nil, 0},
		{codeErr(-7), -7},
		{fmt.Errorf("wrapped: %w", codeErr(-4)), -4},
		{errors.New("plain"), -99},
	} {
		if got := interceptor.RetOf(tt.err); got != tt.want {
			t.Errorf("RetOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
