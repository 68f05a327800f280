package interceptor_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/interceptor"
)

// codedError is a handler error of the user's own type that carries a TARS return code through
// a TARSCode method, the contract interceptor.RetOf documents ("the code of an error that
// carries one (a TARSCode method, as server.Error has, found with errors.As)").
type codedError int32

func (e codedError) Error() string   { return fmt.Sprintf("coded %d", int32(e)) }
func (e codedError) TARSCode() int32 { return int32(e) }

// TestTARSCodeErrorAnswered: a handler returns an error of its own type with a
// TARSCode method (-11), plain and wrapped with %w. interceptor.RetOf says that is the code "a
// server answers a handler's error with", and the server interceptor's info.Ret is set from it;
// the client must then get that code too, the same the interceptor saw.
// Before, the server answered -99 for any error but a *server.Error, while the interceptor read
// the error's own code.
func TestTARSCodeErrorAnswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"plain", codedError(-11)},
		{"wrapped", fmt.Errorf("lookup: %w", codedError(-11))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int32
			seen.Store(12345)
			got := callThrough(t, tc.err, outerRecorder(&seen))
			if got != -11 {
				t.Errorf("handler returned %v (TARSCode -11): the client got code %d, want -11 as interceptor.RetOf documents", tc.err, got)
			}
			if r := seen.Load(); r != got {
				t.Errorf("the server interceptor saw info.Ret = %d, the client got %d: the interceptor was told a code the client never got", r, got)
			}
		})
	}
}

// TestRetOfCodeZero: an error whose TARSCode is 0 is a failure all the same: RetOf says -99, as
// the server answers it (a *server.Error with Code 0 is answered so). Before, RetOf said 0, and
// an interceptor read success where the client got -99.
func TestRetOfCodeZero(t *testing.T) {
	if got := interceptor.RetOf(codedError(0)); got != -99 {
		t.Fatalf("RetOf(an error with TARSCode 0) = %d, want -99", got)
	}
	if got := interceptor.RetOf(fmt.Errorf("x: %w", codedError(-7))); got != -7 {
		t.Fatalf("RetOf(wrapped TARSCode -7) = %d, want -7", got)
	}
}
