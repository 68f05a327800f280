package future

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestJoinNilFuture: a nil future among Join's or WhenAll's arguments (a *Future[T] variable
// never assigned, or a nil Awaitable) gives an error matching ErrNilFuture. Before, it panicked
// inside the package with a nil pointer dereference.
func TestJoinNilFuture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var typedNil *Future[int]
	cases := []struct {
		name string
		run  func() error
	}{
		{"Join(ctx, ready, typed nil *Future[int])", func() error { return Join(ctx, Ready(1, nil), typedNil) }},
		{"Join(ctx, ready, nil Awaitable)", func() error { return Join(ctx, Ready(1, nil), nil) }},
		{"WhenAll(ready, typed nil *Future[int]).Get", func() error { _, err := WhenAll(Ready(1, nil), typedNil).Get(ctx); return err }},
		{"WhenAll(ready, nil Awaitable).Get", func() error { _, err := WhenAll(Ready(1, nil), nil).Get(ctx); return err }},
	}
	for _, c := range cases {
		panicked, err := catch(c.run)
		switch {
		case panicked != nil:
			t.Errorf("%s panicked (%v); want an error naming the nil future", c.name, panicked)
		case !errors.Is(err, ErrNilFuture) || !strings.Contains(err.Error(), "argument 1 of 2"):
			t.Errorf("%s = %v; want ErrNilFuture naming argument 1 of 2", c.name, err)
		}
	}
}

func catch(f func() error) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = fmt.Sprint(p)
		}
	}()
	return nil, f()
}
