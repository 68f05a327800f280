package future

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errCallEnded = errors.New("the call's own error")

// TestMakeCallGetOnOwnCtx: a Get with the ctx the work ends with (or one sharing its Done
// channel) returns the work's result once ctx ends, not ctx's bare error; a Get with another
// ctx that ends returns that ctx's error, the future still pending.
func TestMakeCallGetOnOwnCtx(t *testing.T) {
	for _, helped := range []bool{false, true} {
		callCtx, cancel := context.WithCancel(context.Background())
		var h Helper
		if helped {
			h = chanHelper{}
		}
		f := MakeCall[int](h, callCtx)
		go func() { // the work: ends when its ctx does, with its own error
			<-callCtx.Done()
			time.Sleep(10 * time.Millisecond) // the call's end reaches the future a moment later
			f.Complete(0, errCallEnded)
		}()

		other, cancelOther := context.WithCancel(context.Background())
		cancelOther()
		if _, err := f.Get(other); !errors.Is(err, context.Canceled) {
			t.Fatalf("helped %v: Get with another ctx, ended: %v, want context.Canceled", helped, err)
		}
		type key struct{}
		derived := context.WithValue(callCtx, key{}, 1) // shares callCtx's Done channel
		cancel()
		for _, ctx := range []context.Context{derived, callCtx} { // derived first: the first Get waits
			if _, err := f.Get(ctx); !errors.Is(err, errCallEnded) {
				t.Fatalf("helped %v: Get with the call's ctx after it ended: %v, want the call's own error", helped, err)
			}
		}
	}
}

// chanHelper waits as a Get without a helper does.
type chanHelper struct{}

func (chanHelper) Wait(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
