package server

import (
	"context"
	"net"
	"strconv"

	"github.com/tarscomm/tarscomm/codec"
)

// Current describes the request being served. The server hands one to every handler call; it
// is valid only during that call (the server reuses it), so a handler that needs a field later
// copies it.
type Current struct {
	// Servant and Func name the called object and function.
	Servant, Func string
	// RequestID is the id the client chose; the reply carries it back.
	RequestID int32
	// Version is the packet version (codec.VersionTars for TARS and protobuf services).
	Version int16
	// PacketType is codec.PacketNormal or codec.PacketOneway (no reply is sent).
	PacketType int8
	// MessageType holds the request's iMessageType flag bits.
	MessageType int32
	// Timeout is the client's call timeout in milliseconds (0 if it sent none). The ctx passed
	// to the handler then has a deadline that long after the loop read the request (a tarscomm
	// client called with that ctx sends no more than what is left); in worker mode a request
	// that waited for a worker longer than that is not run (WithQueueTimeout).
	Timeout int32
	// Context and Status are the request's context and status maps (nil when empty).
	Context, Status map[string]string
	// RemoteAddr is the client's address.
	RemoteAddr net.Addr

	// ResponseContext and ResponseStatus may be set by the handler; they are sent in the reply.
	ResponseContext, ResponseStatus map[string]string

	// Dyed is set for a dyed request (TARS dyeing: iMessageType 0x04), DyeingKey is its key
	// (STATUS_DYED_KEY). The handler's ctx then carries the key (dye.WithKey), so that the calls
	// the handler makes with it are dyed too.
	Dyed      bool
	DyeingKey string

	conn     *conn // the request's connection, for Pusher (push.go)
	received int64 // the server's clock when the loop read the request: Timeout counts from it
}

// HandlerFunc serves one function of a servant. req is the request body, valid only during the
// call; the handler appends its reply body to rsp (which has length 0 and may have spare
// capacity) and returns the result. A non-nil error answers with an error code and an empty
// body: an *Error gives its Code and Desc, any other error codec.RetUnknown with err.Error().
// A panic is recovered and answered with codec.RetUnknown. ctx has the client's deadline when
// it sent a timeout, and ends when the handler returns ("The handler's ctx" in the package
// documentation). The server may keep
// rsp's memory once the handler returned (a large body is written from where the handler put
// it): a handler must not keep rsp, or the slice it returned, beyond the call.
type HandlerFunc func(ctx context.Context, cur *Current, req []byte, rsp []byte) ([]byte, error)

// Error is a TARS return code with a description. A handler returns an *Error to answer with
// that code (iRet) and description (sResultDesc). An error is never a success: an *Error with
// Code 0 (RetOK), or a nil *Error, answers RetUnknown.
type Error struct {
	Code int32
	Desc string
}

// TARSCode returns the code the request is answered with: interceptor.RetOf reads it.
func (e *Error) TARSCode() int32 {
	if e == nil || e.Code == codec.RetOK {
		return codec.RetUnknown
	}
	return e.Code
}

// Error formats the code and the description. A nil *Error (returned as an error, it is not a
// nil error) is RetUnknown.
func (e *Error) Error() string {
	if e == nil {
		return "tars error " + strconv.Itoa(int(codec.RetUnknown)) + ": " + nilErrorDesc
	}
	return "tars error " + strconv.Itoa(int(e.Code)) + ": " + e.Desc
}

// nilErrorDesc is the description a handler's nil *Error is answered with.
const nilErrorDesc = "the handler returned a nil *server.Error"
