package greetpb_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/internal/testpb/commonpb"
	"github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/internal/testpb/greetpb"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/server"
)

// codeZeroAdmin fails Reset with a *server.Error whose Code is 0.
type codeZeroAdmin struct{}

func (codeZeroAdmin) Reset(context.Context, *server.Current, *commonpb.Empty) (*commonpb.Empty, error) {
	return nil, &server.Error{Code: 0, Desc: "reset refused, with code 0"}
}

// TestServerErrorCodeZero: a handler that fails with a *server.Error of Code 0 fails the call
// (the server answers RetUnknown with its description). Before, the generated client reported
// success (a non-nil empty reply, nil error) for every variant, and the failure was lost.
func TestServerErrorCodeZero(t *testing.T) {
	s := server.New(server.WithNumEventLoop(1))
	if err := greetpb.RegisterAdmin(s, adminObj, codeZeroAdmin{}); err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	comm, err := communicator.New(conf.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	_, port, _ := net.SplitHostPort(addr.String())
	ap := new(greetpb.AdminProxy)
	if err := comm.StringToProxy(adminObj+"@tcp -h 127.0.0.1 -p "+port, ap); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	rsp, err := ap.Reset(ctx, &commonpb.Empty{})
	if err == nil {
		t.Errorf("sync Reset whose handler returned &server.Error{Code: 0, Desc: %q}: reply %v, nil error; want an error carrying the description", "reset refused, with code 0", rsp)
	}
	if _, err := ap.FutureReset(ctx, &commonpb.Empty{}).Get(ctx); err == nil {
		t.Errorf("future Reset: nil error; want the handler's failure")
	}
}
