package call

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// ErrTimeout means the call's deadline passed before a reply arrived. The request may or may not
// have been executed by the server; retry only idempotent calls. It also satisfies
// errors.Is(err, context.DeadlineExceeded).
var ErrTimeout error = timeoutError{}

// ErrQueueFull means a bound was reached and the call was not sent: the net thread's request
// queue (queue-cap), the unsent bytes of the chosen connection (send-buffer-limit, including
// calls waiting for it to connect), the callbacks waiting for an async worker (asyncqueuecap),
// or unfinished async calls (async-inflight-limit). The caller is sending faster than the
// servers answer: back off, or raise the bound.
var ErrQueueFull = errors.New("tarscomm: queue full, call not sent")

// ErrNoEndpoint means the proxy has no endpoint to send to (an object name without "@endpoints"
// and no naming service). Fix the proxy string.
var ErrNoEndpoint = errors.New("tarscomm: no endpoint for servant")

// ErrClosed means the Communicator was closed before or while the call ran. Nothing more can be
// sent through it.
var ErrClosed = errors.New("tarscomm: communicator closed")

// ErrConnection means the call failed because its connection could not be established or was
// lost before a reply arrived. A request that was written may have run on the server. The
// wrapped error says what happened (dial error, reset, protocol error).
var ErrConnection = errors.New("tarscomm: connection failed")

// ErrOverload means the servant's max-inflight calls were already in flight: the call was not
// sent. A reply with TARS return code -9 (the server is overloaded) matches it too, as a
// *ServerError. Back off: more calls would only queue.
var ErrOverload = errors.New("tarscomm: servant overloaded, call not sent")

// ErrRequestTooLarge means the request frame was larger than the client's max-packet-size: the
// call was not sent (a server with the same limit would close the connection, failing every
// call on it).
var ErrRequestTooLarge = errors.New("tarscomm: request larger than max-packet-size, call not sent")

// ErrEncode means the request could not be encoded (a protobuf message that does not marshal,
// such as a string field that is not UTF-8): the call was not sent.
var ErrEncode = errors.New("tarscomm: could not encode the request, call not sent")

// ErrDecode means a reply came back (return code 0) but its body could not be decoded into the
// call's reply type: a peer whose interface differs from the caller's, or a corrupt body; or
// the reply was larger than the client's max-packet-size (skipped unread). The server ran the
// call.
var ErrDecode = errors.New("tarscomm: could not decode the reply")

type timeoutError struct{}

func (timeoutError) Error() string   { return "tarscomm: call timed out" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// Is lets a timeout match context.DeadlineExceeded as well as ErrTimeout.
func (timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// ConnError wraps the cause of a connection failure so that it matches ErrConnection.
type ConnError struct {
	Addr  string // the endpoint's host:port
	Cause error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("tarscomm: connection to %s failed: %v", e.Addr, e.Cause)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Cause }

// Is makes a ConnError match ErrConnection.
func (e *ConnError) Is(target error) bool { return target == ErrConnection }

// ServerError is a reply whose TARS return code (iRet) was not 0. Match it with errors.As.
type ServerError struct {
	Code     int32  // the TARS return code, e.g. -3 for an unknown function
	Desc     string // sResultDesc as the server sent it
	Endpoint string // host:port of the server that answered ("" when not known)
}

// Is makes a server's overload answer (-9) match ErrOverload.
func (e *ServerError) Is(target error) bool {
	return target == ErrOverload && e.Code == codec.RetOverload
}

func (e *ServerError) Error() string {
	var b strings.Builder
	b.WriteString("tarscomm: server ")
	if e.Endpoint != "" {
		b.WriteString(e.Endpoint + " ")
	}
	fmt.Fprintf(&b, "returned %d", e.Code)
	if name := codec.RetName(e.Code); !strings.HasPrefix(name, "return code ") {
		b.WriteString(" (" + name + ")") // TARS's codes are named; an application's are its own
	}
	if e.Desc != "" {
		b.WriteString(": " + e.Desc)
	}
	return b.String()
}

// CallError is how a call that got no reply ends, or one whose reply it could not decode: it
// names the call (servant and function), the endpoint it was sent to (when one was chosen) and
// the time it took, and wraps the cause: ErrTimeout, ErrQueueFull, ErrNoEndpoint, ErrClosed, a
// *ConnError, ErrDecode, or the context's error for a cancelled call, so that errors.Is and
// errors.As see through it.
type CallError struct {
	Servant  string
	Func     string
	Endpoint string        // host:port; "" when the call never reached an endpoint
	Elapsed  time.Duration // from the call's start to its end
	Err      error
}

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString("tarscomm: ")
	b.WriteString(e.Servant)
	b.WriteByte('.')
	b.WriteString(e.Func)
	if e.Endpoint != "" {
		b.WriteString(" to ")
		b.WriteString(e.Endpoint)
	}
	b.WriteString(" after ")
	b.WriteString(e.Elapsed.Round(time.Microsecond).String())
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "tarscomm: "))
	return b.String()
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// ErrAbandoned is what a Recorder is told of a call whose caller gave up waiting (its context
// ended) before the loop completed it.
var ErrAbandoned = errAbandoned

var errAbandoned = errors.New("tarscomm: call abandoned by its caller")
