package servantproxy

import (
	"errors"

	"github.com/tarscomm/tarscomm/internal/call"
)

// Errors a call can end with; see each one's doc in the Communicator's package too.
var (
	// ErrTimeout: the deadline passed before a reply arrived. Also matches
	// context.DeadlineExceeded. The server may have run the request.
	ErrTimeout = call.ErrTimeout
	// ErrQueueFull: a bounded queue was full; the call was not sent. Back off or raise the
	// limit the error names (queue-cap, send-buffer-limit, asyncqueuecap, async-inflight-limit).
	ErrQueueFull = call.ErrQueueFull
	// ErrNoEndpoint: the proxy has no endpoint to send to.
	ErrNoEndpoint = call.ErrNoEndpoint
	// ErrClosed: the Communicator is closed.
	ErrClosed = call.ErrClosed
	// ErrConnection: the connection could not be made or was lost before the reply. A written
	// request may have run on the server.
	ErrConnection = call.ErrConnection
	// ErrOverload: the servant's max-inflight calls were in flight, and the call was not sent;
	// a server's -9 (overloaded) reply matches it too. Back off.
	ErrOverload = call.ErrOverload
	// ErrRequestTooLarge: the request frame was larger than the client's max-packet-size; the
	// call was not sent.
	ErrRequestTooLarge = call.ErrRequestTooLarge
	// ErrEncode: the request could not be encoded (marshalled); the call was not sent. A
	// *CallError wraps it with the encoder's error.
	ErrEncode = call.ErrEncode
	// ErrDecode: the reply (return code 0) could not be decoded into the call's reply type, or
	// was larger than max-packet-size (skipped unread); the server ran the call. A *CallError wraps it with the decoder's error.
	ErrDecode = call.ErrDecode
	// ErrInvalidTimeout: WithTimeout was given 0 or a negative duration; the call was not
	// sent. Leave the option out to use the configured timeout.
	ErrInvalidTimeout = errors.New("tarscomm: invalid call timeout: it must be positive")
)

// ServerError is a reply with a non-zero TARS return code; match it with errors.As.
type ServerError = call.ServerError

// ConnError carries the endpoint and cause of a connection failure; it matches ErrConnection.
type ConnError = call.ConnError

// CallError is the error of a call that got no reply: it names the servant, the function, the
// endpoint (when one was chosen) and the time spent, and wraps the cause (one of the errors
// above, a *ConnError, or the context's error), which errors.Is and errors.As see through.
type CallError = call.CallError
