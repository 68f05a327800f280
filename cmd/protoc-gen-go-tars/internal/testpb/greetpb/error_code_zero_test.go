package greetpb_test

import (
	"context"
	"testing"

	"github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/internal/testpb/commonpb"
	"github.com/tarscomm/tarscomm/server"
	"go.uber.org/zap/zaptest"
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
	_, ap := startWith(t, newGreeter(), codeZeroAdmin{}, zaptest.NewLogger(t))
	ctx := testCtx(t)
	rsp, err := ap.Reset(ctx, &commonpb.Empty{})
	if err == nil {
		t.Errorf("sync Reset whose handler returned &server.Error{Code: 0, Desc: %q}: reply %v, nil error; want an error carrying the description", "reset refused, with code 0", rsp)
	}
	if _, err := ap.FutureReset(ctx, &commonpb.Empty{}).Get(ctx); err == nil {
		t.Errorf("future Reset: nil error; want the handler's failure")
	}
}
